"""grpo-config's validation service and web form (interface.md §5).

`web.app.create_app(settings)` builds the FastAPI app; `grpo serve` (web.serve) runs it with uvicorn.
The service imports `grpo_schema` only: never torch, never the runtime.
"""
