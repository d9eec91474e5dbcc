"""HTTP routers: thin adapters from requests to grpo_schema calls. No validation logic lives here."""
