"""GET /healthz: the service is up (for load balancers and the test fixtures)."""

from fastapi import APIRouter

router = APIRouter(tags=["service"])


@router.get("/healthz", summary="Liveness")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}
