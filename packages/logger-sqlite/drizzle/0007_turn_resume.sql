CREATE TABLE `turn_resume` (
	`run_id` integer NOT NULL,
	`rollout_id` text NOT NULL,
	`idx` integer NOT NULL,
	`prompt_ids_base` integer NOT NULL,
	`prompt_ids` blob NOT NULL,
	`completion_ids` blob NOT NULL,
	`logprobs` blob NOT NULL,
	`point_json` text NOT NULL,
	PRIMARY KEY(`run_id`, `rollout_id`, `idx`)
);
