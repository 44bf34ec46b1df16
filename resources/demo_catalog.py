"""What one training step of the demo launches: kernels, copies, events, in CPU order.

The model is a 12-layer transformer trained data-parallel (PyTorch-style kernel names, cuBLAS
SGEMMs, an NCCL ring all-reduce). :func:`step_template` returns the step as columns, one
entry per CUDA API call of the main thread; the GPU work it causes is described by the same
entry. Nominal durations are what an unthrottled H100 rank takes, in ns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "API_NAMES",
    "KERNELS",
    "LAYERS",
    "OP_KERNEL",
    "OP_MEMCPY",
    "OP_MEMSET",
    "OP_NONE",
    "OP_STREAM_SYNC",
    "OP_WAIT",
    "PHASES",
    "STREAM_BACKWARD",
    "STREAM_COMPUTE",
    "STREAM_NCCL",
    "Kernel",
    "StepTemplate",
    "step_template",
]

LAYERS = 12
STREAM_COMPUTE = 7
STREAM_BACKWARD = 13
STREAM_NCCL = 17

#: phase index -> NVTX range name (phase 0 is the batch upload before ``forward``)
PHASES = ("data", "forward", "backward", "allreduce", "optimizer", "readback")

# GPU work of an API call
OP_NONE, OP_KERNEL, OP_MEMCPY, OP_MEMSET, OP_WAIT, OP_STREAM_SYNC = range(6)

API_NAMES = (
    "cudaLaunchKernel_v7000",
    "cudaMemcpyAsync_v3020",
    "cudaMemsetAsync_v3020",
    "cudaEventRecord_v3020",
    "cudaStreamWaitEvent_v3020",
    "cudaStreamSynchronize_v3020",
    "cudaLaunchKernelExC_v11060",
)
_LAUNCH, _MEMCPY, _MEMSET, _RECORD, _WAIT, _SYNC, _LAUNCH_EX = range(len(API_NAMES))


@dataclass(frozen=True)
class Kernel:
    """One kernel function: its three names and launch shape."""

    demangled: str
    short: str
    mangled: str | None
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    registers: int
    static_smem_bytes: int = 0
    dynamic_smem_bytes: int = 0


def _sgemm(tile: str, grid: tuple[int, int, int]) -> Kernel:
    name = f"ampere_sgemm_{tile}"
    return Kernel(name, name, name, grid, (128, 1, 1), 122, 12544)


_AT = "at::native::"
_ANON = "at::native::(anonymous namespace)::"
_ARR = "at::detail::Array<char *, {}>>(int, T2, T3)"

KERNELS: dict[str, Kernel] = {
    "ln_fwd": Kernel(
        f"void {_ANON}vectorized_layer_norm_kernel<float, float>(int, T2, const T1 *, "
        "const T1 *, const T1 *, T2 *, T2 *, T1 *)",
        "vectorized_layer_norm_kernel",
        None,
        (8192, 1, 1),
        (128, 1, 1),
        30,
    ),
    "gemm_qkv": _sgemm("128x64_tn", (48, 64, 1)),
    "gemm_scores": _sgemm("64x64_tn", (8, 8, 64)),
    "gemm_context": _sgemm("64x64_nn", (8, 8, 64)),
    "gemm_up": _sgemm("128x128_tn", (32, 64, 1)),
    "gemm_dgrad": _sgemm("128x64_nn", (16, 64, 1)),
    "gemm_wgrad": _sgemm("128x64_nt", (16, 16, 1)),
    "gemm_up_dgrad": _sgemm("128x128_nn", (8, 64, 1)),
    "gemm_up_wgrad": _sgemm("128x128_nt", (32, 8, 1)),
    "gemm_attn_bwd": _sgemm("64x64_nt", (8, 8, 64)),
    "softmax_fwd": Kernel(
        "void <unnamed>::softmax_warp_forward<float, float, float, 9, false, false>(T2 *, "
        "const T1 *, int, int, int, const bool *, int, bool)",
        "softmax_warp_forward",
        None,
        (16384, 1, 1),
        (128, 1, 1),
        40,
    ),
    "softmax_bwd": Kernel(
        "void <unnamed>::softmax_warp_backward<float, float, float, 9, false, false>(T2 *, "
        "const T1 *, const T1 *, int, int, int, const bool *)",
        "softmax_warp_backward",
        None,
        (16384, 1, 1),
        (128, 1, 1),
        38,
    ),
    "add": Kernel(
        f"void {_AT}vectorized_elementwise_kernel<4, {_AT}CUDAFunctor_add<float>, "
        + _ARR.format(3),
        "vectorized_elementwise_kernel",
        None,
        (8192, 1, 1),
        (128, 1, 1),
        24,
    ),
    "gelu": Kernel(
        f"void {_AT}vectorized_elementwise_kernel<4, {_AT}GeluCUDAKernelImpl(at::"
        "TensorIteratorBase &, at::native::GeluType)::[lambda() (instance 1)]::operator ()() "
        "const::[lambda() (instance 4)]::operator ()() const::[lambda(float) (instance 1)], "
        + _ARR.format(2),
        "vectorized_elementwise_kernel",
        None,
        (32768, 1, 1),
        (128, 1, 1),
        28,
    ),
    "gelu_bwd": Kernel(
        f"void {_AT}vectorized_elementwise_kernel<4, {_AT}GeluBackwardCUDAKernelImpl(at::"
        "TensorIteratorBase &, at::native::GeluType)::[lambda() (instance 2)]::operator ()() "
        "const::[lambda() (instance 4)]::operator ()() const::[lambda(float, float) "
        "(instance 1)], " + _ARR.format(3),
        "vectorized_elementwise_kernel",
        None,
        (32768, 1, 1),
        (128, 1, 1),
        32,
    ),
    "ln_bwd_input": Kernel(
        f"void {_ANON}layer_norm_grad_input_kernel<float, float>(const T1 *, const T1 *, "
        "const T2 *, const T2 *, const T1 *, T1 *, int)",
        "layer_norm_grad_input_kernel",
        None,
        (8192, 1, 1),
        (256, 1, 1),
        40,
        0,
        2048,
    ),
    "ln_bwd_gamma": Kernel(
        f"void {_ANON}GammaBetaBackwardCUDAKernel<float, float>(long, long, const T1 *, "
        "const T1 *, const T2 *, const T2 *, T1 *, T1 *)",
        "GammaBetaBackwardCUDAKernel",
        None,
        (32, 1, 1),
        (32, 32, 1),
        64,
        8448,
    ),
    "loss_fwd": Kernel(
        f"void {_ANON}cunn_SoftMaxForward<4, float, float, float, {_ANON}"
        "LogSoftMaxForwardEpilogue>(T4 *, const T2 *, int)",
        "cunn_SoftMaxForward",
        None,
        (8192, 1, 1),
        (1024, 1, 1),
        36,
        0,
        4096,
    ),
    "nll_fwd": Kernel(
        f"void {_ANON}nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(T1 *, T1 *, "
        "const T1 *, const T3 *, const T1 *, bool, long, long, long, long)",
        "nll_loss_forward_reduce_cuda_kernel_2d",
        None,
        (1, 1, 1),
        (32, 1, 1),
        32,
        256,
    ),
    "nll_bwd": Kernel(
        f"void {_ANON}nll_loss_backward_reduce_cuda_kernel_2d<float, long>(T1 *, const T1 *, "
        "const T2 *, const T1 *, const T1 *, bool, int, int, long, long)",
        "nll_loss_backward_reduce_cuda_kernel_2d",
        None,
        (1, 1, 1),
        (32, 1, 1),
        26,
    ),
    "loss_bwd": Kernel(
        f"void {_ANON}cunn_SoftMaxBackward<4, float, float, float, {_ANON}"
        "LogSoftMaxBackwardEpilogue>(T2 *, const T4 *, const T3 *, long)",
        "cunn_SoftMaxBackward",
        None,
        (8192, 1, 1),
        (1024, 1, 1),
        30,
        0,
        4096,
    ),
    "adam": Kernel(
        f"void {_AT}<unnamed>::multi_tensor_apply_kernel<{_AT}<unnamed>::TensorListMetadata<4>, "
        f"{_AT}<unnamed>::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)0, false>, "
        "float *, double, double, double, double, double, bool, const float *, const float *>"
        "(T1, T2, T3...)",
        "multi_tensor_apply_kernel",
        None,
        (320, 1, 1),
        (512, 1, 1),
        96,
    ),
    "nccl": Kernel(
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP11ncclDevCommmP8ncclWork",
        (4, 1, 1),
        (640, 1, 1),
        96,
        0,
        8768,
    ),
}
_KERNEL_KEYS = tuple(KERNELS)

# (kernel, stream, nominal µs) of one layer's forward and backward
_FORWARD_LAYER = (
    ("ln_fwd", 42),
    ("gemm_qkv", 250),
    ("gemm_scores", 160),
    ("softmax_fwd", 105),
    ("gemm_context", 160),
    ("gemm_qkv", 90),
    ("add", 28),
    ("ln_fwd", 42),
    ("gemm_up", 330),
    ("gelu", 58),
    ("gemm_qkv", 320),
    ("add", 28),
)
_BACKWARD_COMPUTE = (
    ("gemm_dgrad", 320),
    ("gelu_bwd", 70),
    ("gemm_up_dgrad", 330),
    ("ln_bwd_input", 65),
    ("gemm_dgrad", 90),
    ("gemm_attn_bwd", 160),
    ("softmax_bwd", 115),
    ("gemm_attn_bwd", 160),
    ("gemm_dgrad", 250),
    ("ln_bwd_input", 65),
    ("add", 28),
)
_BACKWARD_WEIGHTS = (
    ("gemm_wgrad", 330),
    ("gemm_up_wgrad", 340),
    ("ln_bwd_gamma", 48),
    ("gemm_wgrad", 92),
    ("gemm_wgrad", 255),
    ("ln_bwd_gamma", 48),
)
_ADAM_LAUNCHES = 6
BATCH_BYTES = 16_777_216
GRADIENT_BUCKET_BYTES = 4_194_304


@dataclass(frozen=True)
class StepTemplate:
    """One training step as parallel columns, one entry per CUDA API call in CPU order.

    ``kernel`` indexes :data:`KERNELS` (-1 when the call launches no kernel); ``depends_on``
    is the entry whose GPU end a backward-stream entry waits for (-1 for none).
    """

    api: np.ndarray
    op: np.ndarray
    kernel: np.ndarray
    stream: np.ndarray
    nominal_ns: np.ndarray
    bytes: np.ndarray
    copy_kind: np.ndarray
    phase: np.ndarray
    layer: np.ndarray
    depends_on: np.ndarray

    def __len__(self) -> int:
        return len(self.api)


class _Builder:
    def __init__(self) -> None:
        self.rows: list[tuple[int, ...]] = []

    def add(self, api, op, kernel="", stream=STREAM_COMPUTE, us=0.0, nbytes=0, copy=0, **kw):
        k = _KERNEL_KEYS.index(kernel) if kernel else -1
        row = (api, op, k, stream, int(us * 1000), nbytes, copy, kw["phase"], kw.get("layer", -1))
        self.rows.append((*row, kw.get("dep", -1)))
        return len(self.rows) - 1


def _backward_layer(b: _Builder, layer: int) -> None:
    last = -1
    for kernel, us in _BACKWARD_COMPUTE:
        last = b.add(_LAUNCH, OP_KERNEL, kernel, us=us, phase=2, layer=layer)
    b.add(_RECORD, OP_NONE, phase=2, layer=layer)
    b.add(_WAIT, OP_WAIT, stream=STREAM_BACKWARD, phase=2, layer=layer)
    for kernel, us in _BACKWARD_WEIGHTS:
        b.add(_LAUNCH, OP_KERNEL, kernel, STREAM_BACKWARD, us, phase=2, layer=layer, dep=last)


def step_template() -> StepTemplate:
    """Return the CUDA API calls of one training step, in the order the CPU issues them."""
    b = _Builder()
    b.add(_MEMCPY, OP_MEMCPY, us=640, nbytes=BATCH_BYTES, copy=1, phase=0)
    for layer in range(LAYERS):
        for kernel, us in _FORWARD_LAYER:
            b.add(_LAUNCH, OP_KERNEL, kernel, us=us, phase=1, layer=layer)
    b.add(_LAUNCH, OP_KERNEL, "loss_fwd", us=380, phase=1)
    b.add(_LAUNCH, OP_KERNEL, "nll_fwd", us=18, phase=1)
    b.add(_MEMSET, OP_MEMSET, us=9, nbytes=GRADIENT_BUCKET_BYTES, phase=2)
    b.add(_LAUNCH, OP_KERNEL, "nll_bwd", us=16, phase=2)
    b.add(_LAUNCH, OP_KERNEL, "loss_bwd", us=350, phase=2)
    for layer in reversed(range(LAYERS)):
        _backward_layer(b, layer)
    b.add(_RECORD, OP_NONE, phase=3)
    b.add(_WAIT, OP_WAIT, stream=STREAM_NCCL, phase=3)
    b.add(_LAUNCH_EX, OP_KERNEL, "nccl", STREAM_NCCL, 3500, phase=3)
    b.add(_RECORD, OP_NONE, stream=STREAM_NCCL, phase=3)
    b.add(_WAIT, OP_WAIT, phase=3)
    for _ in range(_ADAM_LAUNCHES):
        b.add(_LAUNCH, OP_KERNEL, "adam", us=240, phase=4)
    b.add(_MEMCPY, OP_MEMCPY, us=2, nbytes=4, copy=2, phase=5)
    b.add(_SYNC, OP_STREAM_SYNC, phase=5)
    cols = np.array(b.rows, dtype=np.int64).T
    names = [f for f in StepTemplate.__dataclass_fields__]
    return StepTemplate(**{n: cols[i] for i, n in enumerate(names)})
