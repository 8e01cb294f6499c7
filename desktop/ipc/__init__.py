"""Talking to the sidecar: process lifecycle (`SidecarProcess`) apart from messaging, and the
typed face every request goes through (`SidecarApi`)."""

from desktop.ipc.api import SidecarApi
from desktop.ipc.client import RpcClient
from desktop.ipc.errors import ClientErrorCode
from desktop.ipc.pending import PendingRequest, RequestSender
from desktop.ipc.process import SidecarProcess, build_sidecar_process

__all__ = [
    "ClientErrorCode",
    "PendingRequest",
    "RequestSender",
    "RpcClient",
    "SidecarApi",
    "SidecarProcess",
    "build_sidecar_process",
]
