"""A lean decoding loop inside `generate`: transformers' sampling loop without its per-token overhead, and with
each distinct prompt prefilled once.

It runs as generate's `custom_generate` callable, so `generate` still prepares everything from the
GenerationConfig (generation_kwargs included) exactly as it always does: the config merged with the model's
generation config, max/min lengths, the logits processors (temperature, top_k, top_p, min_p,
repetition_penalty, min_new_tokens, ...), the stopping criteria (max length, the EOS set), pad and EOS tensors,
position ids, attention mask and an empty cache. The loop then does what `GenerationMixin._sample` does with
them, minus its overhead:

* the same model calls with the same inputs: the prompt, then each new token with position = previous + 1, the
  2-D mask grown by one column, the cache, `use_cache` and `logits_to_keep` (built directly instead of through
  `prepare_inputs_for_generation` and `_update_model_kwargs_for_generation` every token); under sdpa, with
  padded prompts, each decoding step gets the mask transformers would build from the 2-D one, ready-made
  (`prepared_mask_applies`: building it was ~7% of a small step);
* the same processors and criteria, called directly: `LogitsProcessorList.__call__` inspects every processor's
  signature on every token, then, with no extra arguments (as `_sample` passes none), calls it the same way;
* the same draw, `torch.multinomial(softmax(scores), 1)` on [R, V] (argmax without sampling), and the same
  padding of finished rows, so the global RNG advances exactly as in `generate`: with distinct prompts the
  tokens are the very tokens `generate` samples with the same seed. With shared prefill (prefill.py) the
  logits agree to ~1e-7;
* no scores, attentions or streamer (never requested here).

Anything else runs transformers' own loop: other decoding modes (beam search, assisted decoding), output
requests, caches other than the dynamic one, models that override generate's input hooks, remote code, PEFT
wrappers, DeepSpeed ZeRO-3 / FSDP (their synchronised decoding). The hooks used here (`_prepare_generation_config`,
`_sample`, `_optimize_model_for_decode`, `_pad_token_tensor`) are generate's internals; the tests pin their
behaviour against the transformers version in use.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch

from grpo_runtime.generation.prefill import (
    Sharing,
    can_share_cache,
    full_attention_only,
    one_sequence_per_row,
    resolved_config,
)

# generate's per-token hooks; a model class that overrides any of them needs generate's own loop.
GENERATE_HOOKS = ("prepare_inputs_for_generation", "_update_model_kwargs_for_generation", "_prefill", "_sample")
# generate's internals used here and in prefill.py; a transformers without them runs generate unchanged.
INTERNALS = GENERATE_HOOKS + (
    "_prepare_generation_config",
    "_optimize_model_for_decode",
    "_supports_default_dynamic_cache",
)
MODEL_INPUTS = {"attention_mask", "position_ids", "past_key_values", "use_cache", "logits_to_keep"}


@dataclass(frozen=True)
class Route:
    """How `generate` runs for a model and config: the lean loop or generate's own, each distinct prompt
    prefilled once or every row on its own."""

    lean: bool
    share: bool

    @classmethod
    def choose(cls, model, gen_config) -> "Route":
        """The route for this model, config and train/eval mode, decided once: resolving the config deep-copies
        it (~1 ms, 2% of a small step) and the answer cannot change while the three stay the same objects."""
        known = _ROUTES.setdefault(model, {})
        key = (id(gen_config), model.training)
        if key not in known or known[key][0] is not gen_config:
            known[key] = (gen_config, cls.decide(model, gen_config))
        return known[key][1]

    @classmethod
    def decide(cls, model, gen_config) -> "Route":
        from transformers import GenerationMixin, PreTrainedModel

        plain_model = isinstance(model, PreTrainedModel) and not model.config.is_encoder_decoder
        if not plain_model or not all(hasattr(GenerationMixin, name) for name in INTERNALS):
            return cls(lean=False, share=False)  # e.g. a PEFT wrapper: its own generate
        resolved, model_kwargs = resolved_config(model, gen_config)
        lean = lean_decoding_applies(model, resolved, model_kwargs)
        # Sharing happens only in the lean loop, which builds every model input itself; generate's own loop
        # (custom input hooks, e.g. multimodal position ids) always prefills each row as it would.
        return cls(lean=lean, share=lean and can_share_cache(model, resolved))


# model -> {(id(config), training): (config, route)}; weak on the model, so a discarded model takes its routes along.
_ROUTES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def uses_generic_hooks(model) -> bool:
    from transformers import GenerationMixin

    return not model.is_remote_code() and all(
        getattr(type(model), hook) is getattr(GenerationMixin, hook) for hook in GENERATE_HOOKS
    )


def synchronised_decoding(model) -> bool:
    """DeepSpeed ZeRO-3 or FSDP: generate keeps every process stepping until all have finished."""
    try:
        from transformers.distributed.fsdp import is_fsdp_managed_module
        from transformers.integrations.deepspeed import is_deepspeed_zero3_enabled
    except ImportError:  # another transformers layout: leave the decision to generate
        return True
    return is_deepspeed_zero3_enabled() or is_fsdp_managed_module(model)


def lean_decoding_applies(model, resolved, model_kwargs) -> bool:
    """Whether `generate` samples (or decodes greedily) one sequence per row with nothing the lean loop leaves
    out, judged on the config as generate resolves it (the model's generation config included)."""
    return (
        uses_generic_hooks(model)
        and not synchronised_decoding(model)
        and one_sequence_per_row(resolved)
        and not model_kwargs  # output_attentions / output_hidden_states
        and not resolved.return_dict_in_generate
        and resolved.use_cache is not False
        and resolved.prefill_chunk_size is None
        and not resolved.token_healing
    )


def plain_dynamic_cache(cache) -> bool:
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    return (
        type(cache) is DynamicCache
        and cache.get_seq_length() == 0
        and all(type(layer) in (DynamicLayer, DynamicSlidingWindowLayer) for layer in cache.layers)
    )


class LeanSampler:
    """generate(..., custom_generate=LeanSampler(sharing)): `sharing` maps rows to distinct prompts (None: every
    row is prefilled on its own, e.g. when dropout makes each forward pass random)."""

    def __init__(self, sharing: Sharing | None):
        self.sharing = sharing

    def __call__(self, model, input_ids, logits_processor, stopping_criteria, generation_config, **model_kwargs):
        cache = model_kwargs.get("past_key_values")
        if set(model_kwargs) - MODEL_INPUTS or "position_ids" not in model_kwargs or not plain_dynamic_cache(cache):
            from transformers import GenerationMixin

            return GenerationMixin._sample(
                model,
                input_ids,
                logits_processor=logits_processor,
                stopping_criteria=stopping_criteria,
                generation_config=generation_config,
                **model_kwargs,
            )
        sharing = self.sharing
        if sharing is None or not full_attention_only(cache) or len(sharing.owners) != input_ids.size(0):
            sharing = None
        logits = prefill_prompts(model, input_ids, model_kwargs, sharing)  # [R, V]
        with model._optimize_model_for_decode():  # as generate: after the prefill, for the decoding steps
            return decode(
                model, input_ids, logits, list(logits_processor), stopping_criteria, generation_config, model_kwargs
            )


def prefill_prompts(model, input_ids, model_kwargs, sharing: Sharing | None) -> torch.Tensor:
    """The first forward pass, once per distinct prompt when shared; returns next-token logits [R, V] float32
    and leaves the cache holding every row's prompt."""
    rows = slice(None) if sharing is None else sharing.leaders.to(input_ids.device)
    mask = model_kwargs.get("attention_mask")
    cache = model_kwargs["past_key_values"]
    output = model(
        input_ids=input_ids[rows],
        position_ids=model_kwargs["position_ids"][rows],
        attention_mask=None if mask is None else mask[rows],
        past_key_values=cache,
        **step_options(model_kwargs),
        return_dict=True,
    )
    logits = output.logits[:, -1].to(copy=True, dtype=torch.float32, device=input_ids.device)  # [U, V]
    if sharing is None:
        return logits
    owners = sharing.owners.to(input_ids.device)
    cache.batch_select_indices(owners)
    return logits[owners]  # [R, V]


def prepared_mask_applies(model, cache, mask) -> bool:
    """Whether each decoding step may get its attention mask prepared: under sdpa, on a causal model whose layers
    all attend to the whole past, one new token per row may attend to every cached position its row's 2-D mask
    keeps, so the mask transformers would build from the 2-D one is that mask as [R, 1, 1, L] booleans. With no
    padding at all transformers passes no mask to sdpa, so the 2-D mask is left as it is then."""
    config = model.config.get_text_config(decoder=True)
    return (
        model.config._attn_implementation == config._attn_implementation == "sdpa"
        and getattr(config, "is_causal", True)
        and full_attention_only(cache)
        and bool((mask == 0).any())
    )


def step_options(model_kwargs) -> dict:
    return {name: model_kwargs[name] for name in ("use_cache", "logits_to_keep") if name in model_kwargs}


def decode(model, input_ids, logits, processors, stopping_criteria, generation_config, model_kwargs):
    """`_sample`'s loop from the prompts' next-token logits [R, V]: process, draw, pad finished rows, append, stop
    when every row is done, else run the new tokens."""
    mask, options = model_kwargs.get("attention_mask"), step_options(model_kwargs)
    position = model_kwargs["position_ids"][:, -1:]  # [R, 1]
    pad = generation_config._pad_token_tensor
    pad = None if pad is None else pad.to(input_ids.device)
    pads_finished = any(hasattr(criteria, "eos_token_id") for criteria in stopping_criteria)
    unfinished = torch.ones(input_ids.size(0), dtype=torch.long, device=input_ids.device)  # [R]
    prepared = mask is not None and prepared_mask_applies(model, model_kwargs["past_key_values"], mask)
    while True:
        for processor in processors:
            logits = processor(input_ids, logits)
        if generation_config.do_sample:
            tokens = torch.multinomial(torch.nn.functional.softmax(logits, dim=-1), num_samples=1).squeeze(1)
        else:
            tokens = torch.argmax(logits, dim=-1)
        if pads_finished:
            tokens = tokens * unfinished + pad * (1 - unfinished)
        input_ids = torch.cat([input_ids, tokens[:, None]], dim=-1)  # [R, L+1]
        unfinished = unfinished & ~stopping_criteria(input_ids, None)
        if unfinished.max() == 0:
            return input_ids
        position = position + 1
        if mask is not None:
            mask = torch.cat([mask, mask.new_ones((mask.size(0), 1))], dim=-1)
        output = model(
            input_ids=tokens[:, None],
            position_ids=position,
            attention_mask=mask[:, None, None, :].bool() if prepared else mask,
            past_key_values=model_kwargs["past_key_values"],
            **options,
            return_dict=True,
        )
        logits = output.logits[:, -1].to(copy=True, dtype=torch.float32, device=input_ids.device)
