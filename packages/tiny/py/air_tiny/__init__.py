"""air's CPU stand-ins for prime-rl's trainer (`python -m air_tiny.trainer @ trainer.toml`, also under torchrun)
and inference server (`python -m air_tiny.inference @ inference.toml`). See packages/tiny/README.md."""
