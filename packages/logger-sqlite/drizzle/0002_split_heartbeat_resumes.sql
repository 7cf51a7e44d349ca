ALTER TABLE `runs` ADD `heartbeat_at` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `resumes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `trajectories` ADD `split` text DEFAULT 'train' NOT NULL;--> statement-breakpoint
-- Stores written before this column: a periodic evaluation's rollouts are the ones in an "eval:<step>:<example>" group.
UPDATE `trajectories` SET `split` = 'eval' WHERE `group_id` LIKE 'eval:%';
