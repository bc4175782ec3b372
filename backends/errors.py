"""Typed errors. Every failure that reaches a person or an agent carries one of
these codes and a message that says what to do next."""

from __future__ import annotations

from enum import Enum


class ErrorCode(str, Enum):
    invalid_input = "invalid_input"
    dependency_missing = "dependency_missing"
    stale_default = "stale_default"
    command_denied = "command_denied"
    command_failed = "command_failed"
    timeout = "timeout"
    resource_busy = "resource_busy"
    internal_error = "internal_error"


class DebuggerError(Exception):
    """An error with a code and an actionable message.

    `message` says what happened and what to do next, in one or two sentences.
    `details` holds machine-readable extras (the valid values, the adapter's own
    words) for the structured result.
    """

    code: ErrorCode = ErrorCode.command_failed

    def __init__(self, message: str, code: ErrorCode | None = None, **details: object):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"code": self.code.value, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out


class InvalidInput(DebuggerError):
    code = ErrorCode.invalid_input


class DependencyMissing(DebuggerError):
    code = ErrorCode.dependency_missing


class StaleDefault(DebuggerError):
    code = ErrorCode.stale_default


class CommandDenied(DebuggerError):
    code = ErrorCode.command_denied


class CommandFailed(DebuggerError):
    code = ErrorCode.command_failed


class Timeout(DebuggerError):
    code = ErrorCode.timeout


class ResourceBusy(DebuggerError):
    code = ErrorCode.resource_busy


class InternalError(DebuggerError):
    code = ErrorCode.internal_error


class NotSupported(DebuggerError):
    """The backend cannot do this at all; the message names one that can."""

    code = ErrorCode.invalid_input


class BackendDied(DebuggerError):
    """The adapter or debugger process went away; pending requests fail with this."""

    code = ErrorCode.command_failed


class NoHitInTime(Timeout):
    """debug-script (seeds/002): nothing was hit before the timeout; answered
    as exactly {"error": message}."""


class EndedBeforeHit(CommandFailed):
    """debug-script (seeds/002): the program ended before the breakpoint was
    hit; answered as exactly {"error": message}."""
