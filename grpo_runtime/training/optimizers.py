"""The optimizers grpo_runtime builds, by name (torch-free: the field table reads these before anything loads;
training/optim.py builds them)."""

# bitsandbytes' optimizers, as the HF trainer maps them: 8-bit or 32-bit states, paged or not (paging moves states
# to CPU memory under pressure on CUDA; on a CPU it falls back to the plain optimizer, the same numbers).
BNB_OPTIMIZERS = (
    "adamw_bnb_8bit",
    "adamw_8bit",
    "paged_adamw_32bit",
    "paged_adamw_8bit",
    "lion_32bit",
    "lion_8bit",
    "paged_lion_32bit",
    "paged_lion_8bit",
    "rmsprop_bnb",
    "rmsprop_bnb_8bit",
    "rmsprop_bnb_32bit",
    "ademamix",
    "ademamix_8bit",
    "paged_ademamix_32bit",
    "paged_ademamix_8bit",
)
OPTIMIZERS = ("adamw_torch", "adamw_torch_fused", "sgd", "adagrad", "rmsprop", "adafactor") + BNB_OPTIMIZERS
# optimizers whose optim_args are read (as the HF trainer does)
OPTIM_ARGS_READ = (
    "sgd",
    "adagrad",
    "rmsprop",
    "rmsprop_bnb",
    "rmsprop_bnb_8bit",
    "rmsprop_bnb_32bit",
    "ademamix",
    "ademamix_8bit",
    "paged_ademamix_32bit",
    "paged_ademamix_8bit",
)
EVAL_METRIC_SCHEDULES = ("reduce_lr_on_plateau", "greedy")
