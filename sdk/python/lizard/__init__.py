"""Lizard Python SDK: create sandboxes, run commands and move files in them.

    from lizard import Sandbox

    with Sandbox.create("base", timeout_ms=120_000) as sandbox:
        result = sandbox.process.exec_("python3 -c 'print(2 ** 10)'")
        print(result.stdout, result.exit_code)

Configuration comes from ``LIZARD_API_KEY`` and ``LIZARD_API_URL`` (default
``http://127.0.0.1:7400``) unless given as ``api_key=``/``api_url=``.
"""

from .errors import (
    APIConnectionError,
    AuthenticationError,
    ConflictError,
    ForbiddenError,
    InvalidArgumentError,
    LizardError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitError,
    TimeoutError,
    UnavailableError,
)
from .models import (
    ApiKey,
    ExecResult,
    ExposedPort,
    FileInfo,
    ProcessInfo,
    ProcessOutput,
    Project,
    SandboxInfo,
    Snapshot,
    Template,
)
from .process import ProcessHandle
from .sandbox import DEFAULT_TIMEOUT_MS, Lizard, Sandbox
from .volume import Volume

__version__ = "0.1.0"

__all__ = [
    "Sandbox",
    "Lizard",
    "ProcessHandle",
    "SandboxInfo",
    "ExecResult",
    "ExposedPort",
    "ProcessInfo",
    "ProcessOutput",
    "FileInfo",
    "Project",
    "ApiKey",
    "Template",
    "Snapshot",
    "Volume",
    "LizardError",
    "InvalidArgumentError",
    "AuthenticationError",
    "ForbiddenError",
    "NotFoundError",
    "ConflictError",
    "PayloadTooLargeError",
    "RateLimitError",
    "UnavailableError",
    "TimeoutError",
    "APIConnectionError",
    "DEFAULT_TIMEOUT_MS",
]
