"""Talking to the sidecar: process lifecycle (`SidecarProcess`) apart from messaging."""

from desktop.ipc.client import RpcClient
from desktop.ipc.errors import ClientErrorCode
from desktop.ipc.pending import PendingRequest, RequestSender
from desktop.ipc.process import SidecarProcess, build_sidecar_process

__all__ = [
    "ClientErrorCode",
    "PendingRequest",
    "RequestSender",
    "RpcClient",
    "SidecarProcess",
    "build_sidecar_process",
]
