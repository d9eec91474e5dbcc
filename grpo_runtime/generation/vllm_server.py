"""`vllm_mode: server`: generation on a separate vLLM server, the one `trl vllm-serve` starts.

`trl vllm-serve --model M` (TRL 1.16) runs vLLM's OpenAI server with its development endpoints, the NCCL
weight-transfer engine and processed log-probs. This client speaks the same protocol as TRL's VLLMClient:
* `/health` until it answers (for at most `vllm_server_timeout` seconds), `/v1/models` for the model name;
* generate: the main process gathers every process's prompt rows, sends each distinct prompt once with
  `n` = its number of copies to `/v1/completions` (token ids in, token ids and sampled log-probs out), and every
  process takes its own rows back;
* weights (when the optimizer step changed since the last push): on a CUDA trainer, over NCCL as TRL does
  (`/init_weight_transfer_engine` once = init_communicator, then `/start_weight_update`, `/update_weights` with
  the tensors broadcast from the trainer = update_named_param, `/finish_weight_update`); a trainer without CUDA
  (a CPU run with the server on the same machine) writes the weights as safetensors under
  `output_dir/vllm-weights` and asks the server to reload them in place (`/collective_rpc reload_weights`);
  then `/reset_prefix_cache`. close_communicator drops the NCCL group at the end.
Server mode needs a reachable server with `VLLM_SERVER_DEV_MODE=1` (trl vllm-serve sets it). A server that cannot
be reached, or stops answering during the run, stops the run with GenerationError naming the address; checkpoints
already written are left as they are.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from grpo_runtime.distributed.weights import full_named_parameters, parameter_metadata
from grpo_runtime.generation.backend import GenerationError, Samples, sampled_logprobs, vllm_sampling_settings
from grpo_runtime.generation.vllm_colocate import runs


def server_url(config) -> str:
    if config.vllm_server_base_url:
        return config.vllm_server_base_url.rstrip("/")
    return f"http://{config.vllm_server_host}:{config.vllm_server_port}"


class ServerClient:
    """HTTP calls to one vLLM server; every failure becomes a GenerationError that says where and what."""

    def __init__(self, base_url: str, request_timeout: float = 600.0):
        self.base_url, self.request_timeout = base_url, request_timeout

    def call(self, path: str, body: dict | None = None, timeout: float | None = None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.request_timeout) as response:
                text = response.read().decode() or "null"
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:500]
            raise GenerationError(
                f"the vLLM server at {self.base_url} answered {path} with HTTP {error.code}: {detail}"
            ) from error
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise GenerationError(
                f"the vLLM server at {self.base_url} stopped answering ({path}: {reason}); "
                "check that it is still running"
            ) from error
        return json.loads(text)

    def wait_until_up(self, total_timeout: float, interval: float = 2.0) -> None:
        deadline = time.monotonic() + total_timeout
        while True:
            try:
                self.call("/health", timeout=min(interval * 5, 30.0))
                return
            except GenerationError as error:
                if time.monotonic() >= deadline:
                    raise GenerationError(
                        f"no vLLM server answers at {self.base_url} after {total_timeout:g} s (vllm_server_timeout); "
                        "start one with `trl vllm-serve --model MODEL` or fix vllm_server_base_url / "
                        "vllm_server_host / vllm_server_port"
                    ) from error
            time.sleep(interval)

    def model_name(self) -> str:
        return self.call("/v1/models")["data"][0]["id"]

    def complete(self, model: str, prompts: list[list[int]], settings: dict) -> dict:
        """Token-id prompts to completions: n choices per prompt, in prompt order."""
        body = {
            "model": model,
            "prompt": prompts,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            **settings,
        }
        choices = self.call("/v1/completions", body)["choices"]
        return {
            "completions": [list(c["token_ids"]) for c in choices],
            "logprobs": [(c.get("logprobs") or {}).get("token_logprobs") or [] for c in choices],
        }

    def reset_prefix_cache(self) -> None:
        self.call("/reset_prefix_cache", {})


class ServerBackend:
    name = "vllm-server"

    def __init__(self, config, plan, parts):
        self.parts, self.config, self.last_step, self.communicator = parts, config, None, None
        self.client, self.model = None, None
        self.main = parts.accelerator.is_main_process
        self.use_nccl = parts.accelerator.device.type == "cuda"
        self.call_collectively(self.connect)  # a server that cannot be reached stops every process, none hangs

    def connect(self) -> None:
        if not self.main:
            return
        config = self.config
        self.client = ServerClient(server_url(config), request_timeout=max(config.vllm_server_timeout, 600.0))
        self.client.wait_until_up(config.vllm_server_timeout)
        self.model = self.client.model_name()
        if self.use_nccl:
            self.init_communicator()

    # -- weights ---------------------------------------------------------------------------------------------
    def init_communicator(self) -> None:
        """The NCCL group between this process (rank 0) and the server's workers, as TRL's init_communicator."""
        from vllm.distributed.weight_transfer.nccl_common import trainer_init
        from vllm.utils.network_utils import get_ip

        info = self.client.call("/server_info?config_format=json")["vllm_config"]
        if info.get("weight_transfer_config") is None:
            raise GenerationError(
                f"the vLLM server at {self.client.base_url} has no weight-transfer engine; start "
                "it with `trl vllm-serve` (or `vllm serve --weight-transfer-config "
                '\'{"backend": "nccl"}\'`)'
            )
        world = self.client.call("/get_world_size")["world_size"] + 1
        init_info = {
            "master_address": get_ip(),
            "master_port": self.config.vllm_group_port,
            "rank_offset": 1,
            "world_size": world,
            "packed": True,
        }
        with ThreadPoolExecutor(max_workers=1) as pool:
            answer = pool.submit(self.client.call, "/init_weight_transfer_engine", {"init_info": init_info})
            self.communicator = trainer_init(init_info)
            answer.result()

    def push_weights(self) -> None:
        """Every process walks the (collective) gather; the main process sends what it reads."""
        weights = full_named_parameters(self.parts.model, self.parts.accelerator)
        if not self.main:
            for _ in weights:
                pass
            return
        if self.use_nccl:
            self.push_over_nccl(weights)
        else:
            self.push_through_disk(weights)
        self.client.reset_prefix_cache()

    def push_over_nccl(self, weights) -> None:
        from vllm.distributed.weight_transfer.packed_tensor import packed_nccl_broadcast_producer

        metadata = parameter_metadata(self.parts.model)  # announced first, then streamed in the same order
        info = {
            "names": [m[0] for m in metadata],
            "dtype_names": [m[1] for m in metadata],
            "shapes": [m[2] for m in metadata],
        }
        self.client.call("/start_weight_update", {})
        with ThreadPoolExecutor(max_workers=1) as pool:
            answer = pool.submit(self.client.call, "/update_weights", {"update_info": info})
            packed_nccl_broadcast_producer(
                iterator=weights, group=self.communicator, src=0, post_iter_func=lambda item: item[1]
            )
            answer.result()
        self.client.call("/finish_weight_update", {})

    def push_through_disk(self, weights) -> None:
        from safetensors.torch import save_file

        folder = self.parts.output_dir / "vllm-weights"
        folder.mkdir(parents=True, exist_ok=True)
        save_file(
            {name: tensor.detach().contiguous().cpu() for name, tensor in weights}, str(folder / "model.safetensors")
        )
        self.client.call(
            "/collective_rpc", {"method": "reload_weights", "kwargs": {"weights_path": str(folder.resolve())}}
        )

    # -- generation ------------------------------------------------------------------------------------------
    def generate(self, prompt_lists, num_generations, step) -> Samples:
        from accelerate.utils import broadcast_object_list, gather_object

        accelerator = self.parts.accelerator
        if step != self.last_step:
            self.call_collectively(self.push_weights)
            self.last_step = step
        everyone = gather_object([prompt_lists]) if accelerator.num_processes > 1 else [prompt_lists]
        payload = [None]
        if self.main:
            payload = [self.attempt(lambda: self.generate_all([row for part in everyone for row in part]))]
        if accelerator.num_processes > 1:
            broadcast_object_list(payload, from_process=0)
        completions, logprobs = raise_if_failed(payload[0])
        offsets = [0]
        for part in everyone:
            offsets.append(offsets[-1] + len(part))
        here = slice(offsets[accelerator.process_index], offsets[accelerator.process_index + 1])
        return Samples(completions[here], sampled_logprobs(logprobs[here]))

    def generate_all(self, rows: list[list[int]]):
        """One request per distinct copy count (normally one request: every group has num_generations copies)."""
        groups = runs(rows)
        by_count: dict[int, list[int]] = {}
        for index, (_, count) in enumerate(groups):
            by_count.setdefault(count, []).append(index)
        results: list = [None] * len(groups)
        for count, indices in by_count.items():
            settings = vllm_sampling_settings(self.config, self.parts.eos_ids, count)
            answer = self.client.complete(self.model, [groups[i][0] for i in indices], settings)
            for k, i in enumerate(indices):
                part = slice(k * count, (k + 1) * count)
                results[i] = (answer["completions"][part], answer["logprobs"][part])
        completions = [c for done in results for c in done[0]]
        logprobs = [lp for done in results for lp in done[1]]
        return completions, logprobs

    def attempt(self, action):
        """The action's result, or ("error", message) to hand to every process (so that none waits forever)."""
        try:
            return action()
        except GenerationError as error:
            return ("error", str(error))
        except Exception as error:  # e.g. an answer without the expected fields
            return ("error", f"vLLM server mode failed: {type(error).__name__}: {error}")

    def call_collectively(self, action) -> None:
        """Run `action` on every process; a failure on the main process stops every process with its message."""
        from accelerate.utils import broadcast_object_list

        outcome = [self.attempt(action)]
        if self.parts.accelerator.num_processes > 1:
            broadcast_object_list(outcome, from_process=0)
        raise_if_failed(outcome[0])

    def close(self) -> None:
        if self.communicator is not None:
            self.communicator = None  # close_communicator: the NCCL group goes with its last reference


def raise_if_failed(payload):
    if isinstance(payload, tuple) and len(payload) == 2 and payload[0] == "error":
        raise GenerationError(payload[1])
    return payload
