"""grpo-config's validation service and web form (interface.md §5).

`grpo_web.app.create_app(settings)` builds the FastAPI app; `grpo serve` (grpo_web.serve) runs it with uvicorn.
The service imports `grpo_schema` only: never torch, never the runtime.
"""
