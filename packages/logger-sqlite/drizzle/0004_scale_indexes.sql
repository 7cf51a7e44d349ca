CREATE INDEX `trajectories_run_group` ON `trajectories` (`run_id`,`group_id`);--> statement-breakpoint
CREATE INDEX `trajectories_run_reward` ON `trajectories` (`run_id`,`reward`);--> statement-breakpoint
CREATE INDEX `trajectories_run_improvement` ON `trajectories` (`run_id`,`improvement`);--> statement-breakpoint
CREATE INDEX `trajectories_run_final_score` ON `trajectories` (`run_id`,`final_score`);