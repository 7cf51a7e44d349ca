/**
 * The GraphQL operations air sends to W&B, with the operation names, variables and selections of the official
 * JS SDK (npm `@wandb/sdk` 0.5.1, dist/internal/api.js: `Viewer`, `UpsertBucket`, `RunUploadUrls`). The Python
 * SDK's internal API uses the same three. Requests go as `POST <base_url>/graphql` with
 * `{"query", "variables", "operationName"}` and `Authorization: Basic base64("api:" + key)`.
 */

export const VIEWER = `query Viewer {
  viewer { id entity flags teams { edges { node { name } } } }
}`;

export const UPSERT_BUCKET = `mutation UpsertBucket($id: String, $name: String, $project: String, $entity: String, $groupName: String, $description: String, $displayName: String, $notes: String, $commit: String, $config: JSONString, $host: String, $debug: Boolean, $program: String, $repo: String, $jobType: String, $state: String, $sweep: String, $tags: [String!], $summaryMetrics: JSONString) {
  upsertBucket(input: {id: $id, name: $name, groupName: $groupName, modelName: $project, entityName: $entity, description: $description, displayName: $displayName, notes: $notes, config: $config, commit: $commit, host: $host, debug: $debug, jobProgram: $program, jobRepo: $repo, jobType: $jobType, state: $state, sweep: $sweep, tags: $tags, summaryMetrics: $summaryMetrics}) {
    bucket { id name displayName description config sweepName project { id name entity { id name } } }
    inserted
  }
}`;

export const RUN_UPLOAD_URLS = `query RunUploadUrls($name: String!, $files: [String]!, $entity: String, $run: String!, $description: String) {
  model(name: $name, entityName: $entity) {
    bucket(name: $run, desc: $description) {
      id
      files(names: $files) { uploadHeaders edges { node { name url(upload: true) updatedAt } } }
    }
  }
}`;

/**
 * What a resumed run continues from (the Python SDK's `RunResumeStatus`, selection cut to what air reads): the
 * number of history lines W&B holds, the file-stream offset of the next one.
 */
export const RUN_RESUME_STATUS = `query RunResumeStatus($project: String, $entity: String, $name: String!) {
  model(name: $project, entityName: $entity) {
    id
    bucket(name: $name, missingOk: true) { id name historyLineCount }
  }
}`;

export interface RunResumeStatusResult {
  model?: { bucket?: { historyLineCount?: number | null } | null } | null;
}

/** Variables of `UpsertBucket` that air sets (`name` is the run id, `displayName` the run name). */
export interface UpsertBucketVariables {
  name: string;
  project: string;
  entity: string;
  displayName?: string;
  tags?: string[];
  /** JSON text of `{key: {value}}`, as the Python SDK sends a run's config. */
  config?: string;
  host?: string;
}

export interface UpsertBucketResult {
  upsertBucket?: {
    bucket?: {
      id?: string;
      name?: string;
      displayName?: string;
      project?: { name?: string; entity?: { name?: string } };
    };
  };
}

export interface ViewerResult {
  viewer?: { entity?: string };
}

export interface RunUploadUrlsResult {
  model?: {
    bucket?: {
      files?: { uploadHeaders?: string[]; edges?: Array<{ node?: { name?: string; url?: string } }> };
    };
  };
}
