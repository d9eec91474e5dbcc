"""Looking at runs: completions (paged), two or more runs compared, and downloads of metrics and completions.

Same token and limits as every runs endpoint (the router's dependency). Every bad input is a JSON 4xx.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse

from grpo_schema.engine.loader import load_yaml
from grpo_web.api.run_params import Manager, RunId, run_of
from grpo_web.runs import completion_query, completions, documents, outputs
from grpo_web.runs.auth import require_token
from grpo_web.runs.store import Run

router = APIRouter(
    prefix="/api/v1/runs",
    tags=["runs"],
    dependencies=[Depends(require_token)],
    responses={
        401: {"description": "no valid bearer token"},
        403: {"description": "runs are disabled on this service"},
    },
)
CURVES = ("reward", "kl", "entropy", "completions/mean_length", "loss")
MAX_COMPARE = 8
ID = re.compile(r"^[0-9a-f]{12}$")


@router.get("/compare", summary="Compare runs: their curves and the config keys that differ")
def compare(
    manager: Manager,
    ids: Annotated[str, Query(max_length=MAX_COMPARE * 13, description="two or more run ids, comma separated")],
) -> Any:
    wanted = list(dict.fromkeys(part.strip() for part in ids.split(",") if part.strip()))
    bad = [part for part in wanted if not ID.match(part)]
    if bad:
        raise HTTPException(422, f"not a run id: {', '.join(repr(b[:20]) for b in bad[:3])}")
    if not 2 <= len(wanted) <= MAX_COMPARE:
        raise HTTPException(422, f"compare needs 2 to {MAX_COMPARE} distinct run ids, got {len(wanted)}")
    runs = [run_of(manager, run_id) for run_id in wanted]
    configs = {run.id: _config(run) for run in runs}
    keys = sorted(set().union(*configs.values()))
    differ = {
        key: {run_id: configs[run_id].get(key) for run_id in wanted}
        for key in keys
        if len({json.dumps(configs[run_id].get(key), sort_keys=True, default=str) for run_id in wanted}) > 1
    }
    return {
        "runs": [{"id": run.id, "state": run.state, "curves": _curves(manager.store.metrics(run.id))} for run in runs],
        "metrics": list(CURVES),
        "config_differences": differ,
    }


def _config(run: Run) -> dict:
    """The run's config as posted, with the paths the service resolved for it."""
    if run.config_format == "json":
        try:
            data = json.loads(run.config_text)
        except ValueError:
            data = {}
    else:
        loaded = load_yaml(run.config_text)
        data = loaded.data if loaded.ok else {}
    data = dict(data) if isinstance(data, dict) else {}
    data.update(json.loads(run.overrides or "{}"))
    return {str(k): v for k, v in data.items()}


def _curves(records: list[dict]) -> dict[str, list[list[float]]]:
    curves: dict[str, list[list[float]]] = {name: [] for name in CURVES}
    for record in records:
        step = record.get("step")
        if not isinstance(step, int):
            continue
        for name in CURVES:
            value = record.get(name)
            if (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and value == value
                and abs(value) != float("inf")
            ):
                curves[name].append([step, value])
    return curves


@router.get("/{run_id}/completions", summary="The run's logged completions, a page at a time")
async def run_completions(
    manager: Manager,
    run_id: RunId,
    step: Annotated[int | None, Query(ge=0, description="only rows of this step")] = None,
    limit: Annotated[int, Query(ge=1, le=completions.MAX_LIMIT)] = 50,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
    full: Annotated[bool, Query(description="texts uncut; only with limit=1")] = False,
    sort: Annotated[
        str,
        Query(
            pattern=completion_query.SORT_PATTERN,
            description=(
                "order (the file's), reward-desc, reward-asc, advantage-desc, length-desc, or fn:NAME (that reward "
                "function, highest first); groups stay whole, ordered by their best row"
            ),
        ),
    ] = "order",
    score: Annotated[
        str | None,
        Query(
            max_length=200,
            description="the reward function that `min` and the best/worst marks read (default: the total reward)",
        ),
    ] = None,
    min_score: Annotated[float | None, Query(alias="min", description="only rows whose score is at least this")] = None,
    truncated: Annotated[bool, Query(description="only truncated completions")] = False,
    q: Annotated[
        str,
        Query(
            max_length=completion_query.MAX_SEARCH_CHARS,
            description="only rows whose prompt or completion contains this (any case)",
        ),
    ] = "",
) -> Any:
    """Rows of completions.jsonl (or, without log_completions, the runtime's sample), each text cut to 20,000
    characters (`completion_cut`) unless `full=1` asks for one row whole. Lines that cannot be read are skipped
    and counted (`skipped`, `skipped_lines`). Sort and filters act on every row of the step (or file): `total`
    counts the rows they keep, `total_unfiltered` all; each row's `mark` is best or worst of its group by `score`."""
    if full and limit != 1:
        raise HTTPException(422, "full=1 serves one row whole: ask with limit=1 (and offset= the row's index)")
    if min_score is not None and not math.isfinite(min_score):
        raise HTTPException(422, "min must be a finite number")
    run = run_of(manager, run_id)
    query = completion_query.Query(
        sort=sort, score=score or None, min_score=min_score, truncated_only=truncated, text=q.strip()
    )
    page = await run_in_threadpool(
        completions.read_page, outputs.records_folder(run), step, limit, offset, full, query, _own_rows(manager, run)
    )
    return {**page.to_dict(), "limit": limit, "offset": offset, "state": run.state}


def _own_rows(manager, run: Run) -> completions.Bound:
    """The completions that are the run's (a successor's in the same output_dir are shown on the successor's page)."""
    return documents.own_completions(run, manager.store.latest_metrics(run.id))


def _download(data: bytes | str, name: str, media_type: str) -> Response:
    return Response(
        data,
        media_type=media_type,
        headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"},
    )


@router.get("/{run_id}/metrics.jsonl", summary="Download the run's metrics as JSON lines")
def metrics_jsonl(manager: Manager, run_id: RunId) -> Response:
    run = run_of(manager, run_id)
    text = "".join(json.dumps(r) + "\n" for r in manager.store.metrics(run.id))
    return _download(text, f"{run.id}-metrics.jsonl", "application/x-ndjson")


@router.get("/{run_id}/metrics.csv", summary="Download the run's metrics as CSV (one row a record)")
def metrics_csv(manager: Manager, run_id: RunId) -> Response:
    run = run_of(manager, run_id)
    records = manager.store.metrics(run.id)
    names = list(dict.fromkeys(["step", *(k for r in records for k in r)]))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=names, extrasaction="ignore")
    writer.writeheader()
    for record in records:
        writer.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in record.items()})
    return _download(out.getvalue(), f"{run.id}-metrics.csv", "text/csv; charset=utf-8")


@router.get("/{run_id}/completions.jsonl", summary="Download the run's completions as JSON lines")
def completions_jsonl(manager: Manager, run_id: RunId) -> Response:
    """Every completion row of the file, each line as the run wrote it. Lines that are not completion rows (a
    damaged line, a last line still being written) are left out, so any JSON-lines reader takes the download;
    `X-Skipped-Lines` says how many."""
    run = run_of(manager, run_id)
    found = completions.readable_lines(outputs.records_folder(run), _own_rows(manager, run))
    if found is None:
        raise HTTPException(404, f"run {run.id} has logged no completions yet")
    path, skipped, lines = found
    return StreamingResponse(
        lines,
        media_type="application/x-ndjson",
        headers={
            "Content-Disposition": f'attachment; filename="{run.id}-{path.name}"',
            "Cache-Control": "no-store",
            "X-Skipped-Lines": str(skipped),
        },
    )
