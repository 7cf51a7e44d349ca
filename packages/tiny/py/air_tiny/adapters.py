"""The inference stand-ins' runtime LoRA adapters, as vLLM serves them: each loaded adapter is a model name whose
requests get base + B·A·(alpha/r) (lora.py); requests naming the base get the base, which loading never changes."""

from . import lora as tl


class NotFound(Exception):
    """404: an adapter whose files are not there (yet), or a name that is not loaded."""


class Adapters:
    def __init__(self, enable_lora, max_lora_rank):
        self.enabled, self.max_rank = enable_lora, max_lora_rank
        self.loaded = {}  # lora_name -> {"path", "config", "tensors", "model"}

    def model(self, name):
        adapter = self.loaded.get(name)
        return adapter["model"] if adapter else None

    def load(self, name, path, base, inplace):
        """vLLM's load: a name already loaded is refused unless `inplace` (vLLM's load_inplace, which prime-rl's
        /load_lora_adapter sets). NotFound when the adapter's files are not there, ValueError for the rest (400)."""
        if not self.enabled:
            raise ValueError("LoRA is not enabled (vLLM --enable-lora; prime-rl's [vllm] enable_lora)")
        if name in self.loaded and not inplace:
            raise ValueError(f"The lora adapter '{name}' has already been loaded.")
        try:
            config, tensors = tl.load_adapter(path)
        except FileNotFoundError as e:
            raise NotFound(str(e))
        if int(config.get("r", 0)) > self.max_rank:
            raise ValueError(f"LoRA rank {config.get('r')} is greater than max_lora_rank {self.max_rank}.")
        model = tl.adapted_model(base, config, tensors)
        self.loaded[name] = {"path": path, "config": config, "tensors": tensors, "model": model}

    def unload(self, name):
        if name not in self.loaded:
            raise NotFound(f"The lora adapter '{name}' cannot be found.")
        del self.loaded[name]

    def rebase(self, base):
        """After a full weight update: every adapter applies to the new base weights."""
        for adapter in self.loaded.values():
            adapter["model"] = tl.adapted_model(base, adapter["config"], adapter["tensors"])
