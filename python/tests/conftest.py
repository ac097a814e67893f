"""The Python package's tests run against the build tree (PYTHONPATH is set by ctest), with the
fixture hosts and fake NVIDIA libraries of the C++ test suite."""

import os
import pathlib

import pytest

FIXTURES = pathlib.Path(os.environ.get("MAINBOARD_FIXTURES", pathlib.Path(__file__).parents[2] / "tests/fixtures"))


def host(name: str) -> str:
    return str(FIXTURES / "hosts" / name)


@pytest.fixture
def fake_gpus(monkeypatch):
    """Points the NVIDIA provider at the fake driver libraries and a scenario."""
    nvml = os.environ.get("MAINBOARD_FAKE_NVML")
    cuda = os.environ.get("MAINBOARD_FAKE_CUDA")
    if not nvml or not cuda:
        pytest.skip("the fake NVIDIA libraries are not built")

    def use(scenario) -> None:
        """A recorded scenario's name, or the path of a scenario file a test wrote."""
        path = scenario if isinstance(scenario, pathlib.Path) else FIXTURES / "gpus" / f"{scenario}.json"
        monkeypatch.setenv("MAINBOARD_FAKE_GPU_SCENARIO", str(path))
        monkeypatch.setenv("MAINBOARD_NVML_LIBRARY", nvml)
        monkeypatch.setenv("MAINBOARD_CUDA_LIBRARY", cuda)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    use.path = lambda name: FIXTURES / "gpus" / f"{name}.json"
    return use


class FakeCupti:
    """The fake CUPTI's hooks: GPU activity "happens" when a test says so, on the fake's clock."""

    def __init__(self, path: str) -> None:
        import ctypes

        lib = ctypes.CDLL(path)
        self.now = lib.fake_cupti_now
        self.now.restype = ctypes.c_uint64
        self._kernel = lib.fake_cupti_kernel
        self._kernel.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint32,
                                 ctypes.c_uint32, ctypes.c_uint16, ctypes.c_int32, ctypes.c_uint32]
        self._memcpy = lib.fake_cupti_memcpy
        self._memcpy.argtypes = [ctypes.c_uint8, ctypes.c_uint8, ctypes.c_uint8, ctypes.c_uint64,
                                 ctypes.c_uint64, ctypes.c_uint64]

    def kernel(self, mangled: str, start: int, end: int, grid: int = 264, block: int = 256) -> None:
        self._kernel(mangled.encode(), start, end, grid, block, 40, 0, 7)

    def copy_to_device(self, nbytes: int, start: int, end: int) -> None:
        self._memcpy(1, 1, 3, nbytes, start, end)  # HtoD, pageable -> device


@pytest.fixture
def fake_cupti(monkeypatch):
    """GPU activity through the fake CUPTI library (with the fake NVIDIA driver libraries)."""
    path = os.environ.get("MAINBOARD_FAKE_CUPTI")
    if not path:
        pytest.skip("the fake CUPTI library is not built")
    monkeypatch.setenv("MAINBOARD_CUPTI_LIBRARY", path)
    return FakeCupti(path)
