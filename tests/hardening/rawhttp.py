"""A raw-socket HTTP/1.1 client for requests httpx will not send: bodies trickled byte by byte, lying lengths."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit


def connect(url: str, timeout: float = 1.0) -> socket.socket:
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
    sock.settimeout(timeout)
    return sock


def head(path: str, content_type: str = "application/yaml", length: int | None = None, chunked: bool = False) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: {content_type}"]
    lines += [f"Content-Length: {length}"] if length is not None else []
    lines += ["Transfer-Encoding: chunked"] if chunked else []
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def trickle_until_answer(sock: socket.socket, give_up_after: float, byte: bytes = b"a") -> tuple[bytes, float]:
    """Send one byte every poll until the server answers or closes; (answer, seconds). Bounded by give_up_after."""
    start = time.monotonic()
    while time.monotonic() - start < give_up_after:
        try:
            sock.sendall(byte)
        except OSError:  # the server closed the connection: that is an answer too
            return read_rest(sock), time.monotonic() - start
        try:
            data = sock.recv(65536)
            return data + read_rest(sock), time.monotonic() - start
        except socket.timeout:
            continue
    return b"", time.monotonic() - start


def read_rest(sock: socket.socket, limit_s: float = 5.0) -> bytes:
    """Everything until the server closes the connection (or limit_s passes)."""
    chunks, start = [], time.monotonic()
    while time.monotonic() - start < limit_s:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def status_of(answer: bytes) -> int | None:
    line = answer.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) > 1 and line[1].isdigit() else None
