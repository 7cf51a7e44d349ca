"""The OpenAI chat completion response of the inference stand-ins (vLLM's fields; see the README's route table)."""

import time
import uuid

from . import model as tm


def chat_response(state, body, adapter=None, sglang=False):
    """The answer to `body`, sampled from `adapter` (a loaded LoRA adapter's name) or the base. vLLM puts the ids in
    `prompt_token_ids` (top level) and `choices[0].token_ids`; SGLang (`sglang`) both in the choice, each on its flag."""
    prompt, tokens, values, alternatives, finish, version = state.generate(body, adapter)
    commands, discussion = state.config["commands"], state.config["discussion"]
    as_ids = bool(body.get("return_tokens_as_token_ids"))

    def entry(token, lp):
        piece = tm.token_text(token, commands, discussion)
        return {"token": f"token_id:{token}" if as_ids else piece, "logprob": lp, "bytes": list(piece.encode("utf-8"))}

    content = "".join(tm.token_text(t, commands, discussion) for t in tokens)
    logprobs = None
    if body.get("logprobs"):
        top = int(body.get("top_logprobs") or 0)
        logprobs = {
            "content": [
                {**entry(t, lp), "top_logprobs": [entry(a, alp) for a, alp in ranked[:top]]}
                for t, lp, ranked in zip(tokens, values, alternatives)
            ]
        }
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": content, "tool_calls": []},
        "logprobs": logprobs,
        "finish_reason": finish,
        "stop_reason": None,
    }
    response = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or state.config["model_name"],
        "choices": [choice],
        "usage": {
            "prompt_tokens": len(prompt),
            "completion_tokens": len(tokens),
            "total_tokens": len(prompt) + len(tokens),
        },
        "policy_version": version,
    }
    if sglang:
        if body.get("return_prompt_token_ids"):
            choice["prompt_token_ids"] = prompt
        if body.get("return_token_ids"):
            choice["token_ids"] = tokens
    elif body.get("return_token_ids"):
        choice["token_ids"] = tokens
        response["prompt_token_ids"] = prompt
    return response
