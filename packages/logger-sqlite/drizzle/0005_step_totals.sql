CREATE TABLE `step_advantages` (
	`run_id` integer NOT NULL,
	`step` integer NOT NULL,
	`q` integer NOT NULL,
	`value` real NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`run_id`, `step`, `q`)
);
--> statement-breakpoint
CREATE TABLE `step_totals` (
	`run_id` integer NOT NULL,
	`step` integer NOT NULL,
	`split` text NOT NULL,
	`task` text NOT NULL,
	`rollouts` integer DEFAULT 0 NOT NULL,
	`episodes` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`turns` integer DEFAULT 0 NOT NULL,
	`validated_n` integer DEFAULT 0 NOT NULL,
	`validated_sum` integer DEFAULT 0 NOT NULL,
	`reward_n` integer DEFAULT 0 NOT NULL,
	`reward_sum` real DEFAULT 0 NOT NULL,
	`final_n` integer DEFAULT 0 NOT NULL,
	`final_sum` real DEFAULT 0 NOT NULL,
	`baseline_n` integer DEFAULT 0 NOT NULL,
	`baseline_sum` real DEFAULT 0 NOT NULL,
	`improvement_n` integer DEFAULT 0 NOT NULL,
	`improvement_sum` real DEFAULT 0 NOT NULL,
	`best_improvement` real,
	`best_final` real,
	`parse_errors` integer DEFAULT 0 NOT NULL,
	`tool_errors` integer DEFAULT 0 NOT NULL,
	`evaluation_errors` integer DEFAULT 0 NOT NULL,
	`timeouts` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`run_id`, `step`, `split`, `task`)
);
--> statement-breakpoint
CREATE INDEX `trajectories_run_split_step` ON `trajectories` (`run_id`,`split`,`step`);--> statement-breakpoint
CREATE INDEX `trajectories_run_error` ON `trajectories` (`run_id`,`error`) WHERE error IS NOT NULL;
--> statement-breakpoint
-- Backfill of a store written before this migration (a fresh store has no rows yet): the totals of every bucket.
INSERT INTO `step_totals` (run_id, step, split, task, rollouts, episodes, failed, turns, validated_n, validated_sum, reward_n, reward_sum,
  final_n, final_sum, baseline_n, baseline_sum, improvement_n, improvement_sum)
SELECT run_id, step, split, task, count(*), count(f), count(CASE WHEN f AND status = 'failed' THEN 1 END), coalesce(sum(CASE WHEN f THEN turn_count END), 0),
  count(CASE WHEN f THEN validated END), count(CASE WHEN f AND validated THEN 1 END),
  count(CASE WHEN f THEN reward END), total(CASE WHEN f THEN reward END),
  count(CASE WHEN f THEN final_score END), total(CASE WHEN f THEN final_score END),
  count(CASE WHEN f THEN baseline_score END), total(CASE WHEN f THEN baseline_score END),
  count(CASE WHEN f THEN improvement END), total(CASE WHEN f THEN improvement END)
FROM (SELECT *, CASE WHEN status != 'running' THEN 1 END AS f FROM `trajectories`)
GROUP BY run_id, step, split, task;
--> statement-breakpoint
UPDATE `step_totals` SET best_improvement = b.improvement, best_final = b.final_score
FROM (SELECT run_id, step, split, task, improvement, final_score,
        row_number() OVER (PARTITION BY run_id, step, split, task ORDER BY improvement DESC, id) AS r
      FROM `trajectories` WHERE status != 'running' AND improvement IS NOT NULL) AS b
WHERE b.r = 1 AND step_totals.run_id = b.run_id AND step_totals.step = b.step AND step_totals.split = b.split AND step_totals.task = b.task;
--> statement-breakpoint
UPDATE `step_totals` SET parse_errors = e.p, tool_errors = e.t, evaluation_errors = e.e, timeouts = e.o
FROM (SELECT t.run_id, t.step, t.split, t.task, count(u.parse_error) AS p, count(u.tool_error) AS t, count(u.evaluation_error) AS e,
        count(CASE WHEN u.tool_error LIKE '%timeout%' OR u.tool_error LIKE '%timed out%' THEN 1 END) AS o
      FROM `turns` u JOIN `trajectories` t ON t.run_id = u.run_id AND t.rollout_id = u.rollout_id
      WHERE u.parse_error IS NOT NULL OR u.tool_error IS NOT NULL OR u.evaluation_error IS NOT NULL
      GROUP BY t.run_id, t.step, t.split, t.task) AS e
WHERE step_totals.run_id = e.run_id AND step_totals.step = e.step AND step_totals.split = e.split AND step_totals.task = e.task;
--> statement-breakpoint
-- From here on every write keeps the totals: a trajectory counts once it is finished; its bucket exists from its first row.
CREATE TRIGGER `trajectories_totals_insert` AFTER INSERT ON `trajectories` BEGIN
  INSERT INTO `step_totals` (run_id, step, split, task, rollouts) VALUES (new.run_id, new.step, new.split, new.task, 1)
  ON CONFLICT DO UPDATE SET rollouts = rollouts + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `trajectories_totals_delete_any` AFTER DELETE ON `trajectories` BEGIN
  UPDATE `step_totals` SET rollouts = rollouts - 1 WHERE run_id = old.run_id AND step = old.step AND split = old.split AND task = old.task;
END;
--> statement-breakpoint
CREATE TRIGGER `trajectories_totals_insert_finished` AFTER INSERT ON `trajectories` WHEN new.status != 'running' BEGIN
  INSERT INTO `step_totals` (run_id, step, split, task) VALUES (new.run_id, new.step, new.split, new.task) ON CONFLICT DO NOTHING;
  UPDATE `step_totals` SET
    `episodes` = `episodes` + 1,
    `failed` = `failed` + (new.status = 'failed'),
    `turns` = `turns` + new.turn_count,
    `validated_n` = `validated_n` + (new.validated IS NOT NULL),
    `validated_sum` = `validated_sum` + coalesce(new.validated, 0),
    `reward_n` = `reward_n` + (new.reward IS NOT NULL),
    `reward_sum` = `reward_sum` + coalesce(new.reward, 0),
    `final_n` = `final_n` + (new.final_score IS NOT NULL),
    `final_sum` = `final_sum` + coalesce(new.final_score, 0),
    `baseline_n` = `baseline_n` + (new.baseline_score IS NOT NULL),
    `baseline_sum` = `baseline_sum` + coalesce(new.baseline_score, 0),
    `improvement_n` = `improvement_n` + (new.improvement IS NOT NULL),
    `improvement_sum` = `improvement_sum` + coalesce(new.improvement, 0),
    `best_final` = CASE WHEN new.improvement IS NOT NULL AND (best_improvement IS NULL OR new.improvement > best_improvement) THEN new.final_score ELSE best_final END,
    `best_improvement` = CASE WHEN new.improvement IS NOT NULL AND (best_improvement IS NULL OR new.improvement > best_improvement) THEN new.improvement ELSE best_improvement END
  WHERE run_id = new.run_id AND step = new.step AND split = new.split AND task = new.task;
END;
--> statement-breakpoint
CREATE TRIGGER `trajectories_totals_update_old` AFTER UPDATE OF `status`, `step`, `split`, `task`, `turn_count`, `validated`, `reward`, `final_score`, `baseline_score`, `improvement` ON `trajectories` WHEN old.status != 'running' BEGIN
  UPDATE `step_totals` SET
    `episodes` = `episodes` - 1,
    `failed` = `failed` - (old.status = 'failed'),
    `turns` = `turns` - old.turn_count,
    `validated_n` = `validated_n` - (old.validated IS NOT NULL),
    `validated_sum` = `validated_sum` - coalesce(old.validated, 0),
    `reward_n` = `reward_n` - (old.reward IS NOT NULL),
    `reward_sum` = `reward_sum` - coalesce(old.reward, 0),
    `final_n` = `final_n` - (old.final_score IS NOT NULL),
    `final_sum` = `final_sum` - coalesce(old.final_score, 0),
    `baseline_n` = `baseline_n` - (old.baseline_score IS NOT NULL),
    `baseline_sum` = `baseline_sum` - coalesce(old.baseline_score, 0),
    `improvement_n` = `improvement_n` - (old.improvement IS NOT NULL),
    `improvement_sum` = `improvement_sum` - coalesce(old.improvement, 0),
    `best_final` = CASE WHEN old.improvement IS NOT NULL AND old.improvement >= best_improvement THEN (SELECT `final_score` FROM `trajectories` WHERE run_id = old.run_id AND step = old.step AND split = old.split AND task = old.task AND status != 'running' AND improvement IS NOT NULL ORDER BY improvement DESC, id LIMIT 1) ELSE best_final END,
    `best_improvement` = CASE WHEN old.improvement IS NOT NULL AND old.improvement >= best_improvement THEN (SELECT `improvement` FROM `trajectories` WHERE run_id = old.run_id AND step = old.step AND split = old.split AND task = old.task AND status != 'running' AND improvement IS NOT NULL ORDER BY improvement DESC, id LIMIT 1) ELSE best_improvement END
  WHERE run_id = old.run_id AND step = old.step AND split = old.split AND task = old.task;
END;
--> statement-breakpoint
CREATE TRIGGER `trajectories_totals_update_new` AFTER UPDATE OF `status`, `step`, `split`, `task`, `turn_count`, `validated`, `reward`, `final_score`, `baseline_score`, `improvement` ON `trajectories` WHEN new.status != 'running' BEGIN
  INSERT INTO `step_totals` (run_id, step, split, task) VALUES (new.run_id, new.step, new.split, new.task) ON CONFLICT DO NOTHING;
  UPDATE `step_totals` SET
    `episodes` = `episodes` + 1,
    `failed` = `failed` + (new.status = 'failed'),
    `turns` = `turns` + new.turn_count,
    `validated_n` = `validated_n` + (new.validated IS NOT NULL),
    `validated_sum` = `validated_sum` + coalesce(new.validated, 0),
    `reward_n` = `reward_n` + (new.reward IS NOT NULL),
    `reward_sum` = `reward_sum` + coalesce(new.reward, 0),
    `final_n` = `final_n` + (new.final_score IS NOT NULL),
    `final_sum` = `final_sum` + coalesce(new.final_score, 0),
    `baseline_n` = `baseline_n` + (new.baseline_score IS NOT NULL),
    `baseline_sum` = `baseline_sum` + coalesce(new.baseline_score, 0),
    `improvement_n` = `improvement_n` + (new.improvement IS NOT NULL),
    `improvement_sum` = `improvement_sum` + coalesce(new.improvement, 0),
    `best_final` = CASE WHEN new.improvement IS NOT NULL AND (best_improvement IS NULL OR new.improvement > best_improvement) THEN new.final_score ELSE best_final END,
    `best_improvement` = CASE WHEN new.improvement IS NOT NULL AND (best_improvement IS NULL OR new.improvement > best_improvement) THEN new.improvement ELSE best_improvement END
  WHERE run_id = new.run_id AND step = new.step AND split = new.split AND task = new.task;
END;
--> statement-breakpoint
CREATE TRIGGER `trajectories_totals_delete` AFTER DELETE ON `trajectories` WHEN old.status != 'running' BEGIN
  UPDATE `step_totals` SET
    `episodes` = `episodes` - 1,
    `failed` = `failed` - (old.status = 'failed'),
    `turns` = `turns` - old.turn_count,
    `validated_n` = `validated_n` - (old.validated IS NOT NULL),
    `validated_sum` = `validated_sum` - coalesce(old.validated, 0),
    `reward_n` = `reward_n` - (old.reward IS NOT NULL),
    `reward_sum` = `reward_sum` - coalesce(old.reward, 0),
    `final_n` = `final_n` - (old.final_score IS NOT NULL),
    `final_sum` = `final_sum` - coalesce(old.final_score, 0),
    `baseline_n` = `baseline_n` - (old.baseline_score IS NOT NULL),
    `baseline_sum` = `baseline_sum` - coalesce(old.baseline_score, 0),
    `improvement_n` = `improvement_n` - (old.improvement IS NOT NULL),
    `improvement_sum` = `improvement_sum` - coalesce(old.improvement, 0),
    `best_final` = CASE WHEN old.improvement IS NOT NULL AND old.improvement >= best_improvement THEN (SELECT `final_score` FROM `trajectories` WHERE run_id = old.run_id AND step = old.step AND split = old.split AND task = old.task AND status != 'running' AND improvement IS NOT NULL ORDER BY improvement DESC, id LIMIT 1) ELSE best_final END,
    `best_improvement` = CASE WHEN old.improvement IS NOT NULL AND old.improvement >= best_improvement THEN (SELECT `improvement` FROM `trajectories` WHERE run_id = old.run_id AND step = old.step AND split = old.split AND task = old.task AND status != 'running' AND improvement IS NOT NULL ORDER BY improvement DESC, id LIMIT 1) ELSE best_improvement END
  WHERE run_id = old.run_id AND step = old.step AND split = old.split AND task = old.task;
END;
--> statement-breakpoint
-- Turn errors count in their trajectory's bucket (the recorder writes a trajectory's row before its turns).
CREATE TRIGGER `turns_totals_insert` AFTER INSERT ON `turns` WHEN new.parse_error IS NOT NULL OR new.tool_error IS NOT NULL OR new.evaluation_error IS NOT NULL BEGIN
  UPDATE `step_totals` SET
`parse_errors` = `parse_errors` + (new.parse_error IS NOT NULL),
    `tool_errors` = `tool_errors` + (new.tool_error IS NOT NULL),
    `evaluation_errors` = `evaluation_errors` + (new.evaluation_error IS NOT NULL),
    `timeouts` = `timeouts` + coalesce(new.tool_error LIKE '%timeout%' OR new.tool_error LIKE '%timed out%', 0)
  WHERE run_id = new.run_id AND step = (SELECT `step` FROM `trajectories` WHERE run_id = new.run_id AND rollout_id = new.rollout_id) AND split = (SELECT `split` FROM `trajectories` WHERE run_id = new.run_id AND rollout_id = new.rollout_id) AND task = (SELECT `task` FROM `trajectories` WHERE run_id = new.run_id AND rollout_id = new.rollout_id);
END;
--> statement-breakpoint
CREATE TRIGGER `turns_totals_update_old` AFTER UPDATE OF `parse_error`, `tool_error`, `evaluation_error` ON `turns` WHEN old.parse_error IS NOT NULL OR old.tool_error IS NOT NULL OR old.evaluation_error IS NOT NULL BEGIN
  UPDATE `step_totals` SET
`parse_errors` = `parse_errors` - (old.parse_error IS NOT NULL),
    `tool_errors` = `tool_errors` - (old.tool_error IS NOT NULL),
    `evaluation_errors` = `evaluation_errors` - (old.evaluation_error IS NOT NULL),
    `timeouts` = `timeouts` - coalesce(old.tool_error LIKE '%timeout%' OR old.tool_error LIKE '%timed out%', 0)
  WHERE run_id = old.run_id AND step = (SELECT `step` FROM `trajectories` WHERE run_id = old.run_id AND rollout_id = old.rollout_id) AND split = (SELECT `split` FROM `trajectories` WHERE run_id = old.run_id AND rollout_id = old.rollout_id) AND task = (SELECT `task` FROM `trajectories` WHERE run_id = old.run_id AND rollout_id = old.rollout_id);
END;
--> statement-breakpoint
CREATE TRIGGER `turns_totals_update_new` AFTER UPDATE OF `parse_error`, `tool_error`, `evaluation_error` ON `turns` WHEN new.parse_error IS NOT NULL OR new.tool_error IS NOT NULL OR new.evaluation_error IS NOT NULL BEGIN
  UPDATE `step_totals` SET
`parse_errors` = `parse_errors` + (new.parse_error IS NOT NULL),
    `tool_errors` = `tool_errors` + (new.tool_error IS NOT NULL),
    `evaluation_errors` = `evaluation_errors` + (new.evaluation_error IS NOT NULL),
    `timeouts` = `timeouts` + coalesce(new.tool_error LIKE '%timeout%' OR new.tool_error LIKE '%timed out%', 0)
  WHERE run_id = new.run_id AND step = (SELECT `step` FROM `trajectories` WHERE run_id = new.run_id AND rollout_id = new.rollout_id) AND split = (SELECT `split` FROM `trajectories` WHERE run_id = new.run_id AND rollout_id = new.rollout_id) AND task = (SELECT `task` FROM `trajectories` WHERE run_id = new.run_id AND rollout_id = new.rollout_id);
END;
--> statement-breakpoint
CREATE TRIGGER `turns_totals_delete` AFTER DELETE ON `turns` WHEN old.parse_error IS NOT NULL OR old.tool_error IS NOT NULL OR old.evaluation_error IS NOT NULL BEGIN
  UPDATE `step_totals` SET
`parse_errors` = `parse_errors` - (old.parse_error IS NOT NULL),
    `tool_errors` = `tool_errors` - (old.tool_error IS NOT NULL),
    `evaluation_errors` = `evaluation_errors` - (old.evaluation_error IS NOT NULL),
    `timeouts` = `timeouts` - coalesce(old.tool_error LIKE '%timeout%' OR old.tool_error LIKE '%timed out%', 0)
  WHERE run_id = old.run_id AND step = (SELECT `step` FROM `trajectories` WHERE run_id = old.run_id AND rollout_id = old.rollout_id) AND split = (SELECT `split` FROM `trajectories` WHERE run_id = old.run_id AND rollout_id = old.rollout_id) AND task = (SELECT `task` FROM `trajectories` WHERE run_id = old.run_id AND rollout_id = old.rollout_id);
END;
--> statement-breakpoint
-- The percentiles 0…100 the trigger below computes (a table: a trigger may not use a CTE).
CREATE TABLE `percentile_points` (`k` integer PRIMARY KEY NOT NULL);
--> statement-breakpoint
INSERT INTO `percentile_points` (k) VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9),(10),(11),(12),(13),(14),(15),(16),(17),(18),(19),(20),(21),(22),(23),(24),(25),(26),(27),(28),(29),(30),(31),(32),(33),(34),(35),(36),(37),(38),(39),(40),(41),(42),(43),(44),(45),(46),(47),(48),(49),(50),(51),(52),(53),(54),(55),(56),(57),(58),(59),(60),(61),(62),(63),(64),(65),(66),(67),(68),(69),(70),(71),(72),(73),(74),(75),(76),(77),(78),(79),(80),(81),(82),(83),(84),(85),(86),(87),(88),(89),(90),(91),(92),(93),(94),(95),(96),(97),(98),(99),(100);
--> statement-breakpoint
-- A step's advantage percentiles, computed when it ends (the recorder writes the step's samples before its end).
CREATE TRIGGER `steps_advantages_update` AFTER UPDATE OF `ended_at` ON `steps` WHEN new.ended_at IS NOT NULL BEGIN
  DELETE FROM `step_advantages` WHERE run_id = new.run_id AND step = new.step;
  -- Only the ranks some percentile needs meet the percentiles: rank i serves every k with floor(k (n - 1) / 100) = i,
  -- i.e. k from ceil(100 i / (n - 1)) to floor((100 i + 99) / (n - 1)), looked up in `percentile_points`.
  INSERT INTO `step_advantages` (run_id, step, q, value, n)
  SELECT new.run_id, new.step, k.k, s.v + (s.next - s.v) * ((k.k * (s.n - 1)) % 100) / 100.0, s.n
  FROM (
    SELECT *,
      CASE WHEN n = 1 THEN 0 ELSE (100 * i + n - 2) / (n - 1) END AS lo,
      CASE WHEN n = 1 THEN 100 ELSE min(100, (100 * i + 99) / (n - 1)) END AS hi
    FROM (
      SELECT advantage_mean AS v, coalesce(lead(advantage_mean) OVER w, advantage_mean) AS next, row_number() OVER w - 1 AS i,
        (SELECT count(*) FROM `samples` WHERE run_id = new.run_id AND step = new.step) AS n
      FROM `samples` WHERE run_id = new.run_id AND step = new.step WINDOW w AS (ORDER BY advantage_mean))
  ) AS s
  JOIN `percentile_points` AS k ON k.k BETWEEN s.lo AND s.hi;
END;
--> statement-breakpoint
-- A step row inserted already ended goes through the update trigger above.
CREATE TRIGGER `steps_advantages_insert` AFTER INSERT ON `steps` WHEN new.ended_at IS NOT NULL BEGIN
  UPDATE `steps` SET ended_at = new.ended_at WHERE run_id = new.run_id AND step = new.step;
END;
--> statement-breakpoint
CREATE TRIGGER `steps_advantages_delete` AFTER DELETE ON `steps` BEGIN
  DELETE FROM `step_advantages` WHERE run_id = old.run_id AND step = old.step;
END;
--> statement-breakpoint
-- Backfill of the advantage percentiles of every ended step, through the trigger above.
UPDATE `steps` SET ended_at = ended_at WHERE ended_at IS NOT NULL;