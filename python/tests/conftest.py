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

    def use(scenario: str) -> None:
        monkeypatch.setenv("MAINBOARD_FAKE_GPU_SCENARIO", str(FIXTURES / "gpus" / f"{scenario}.json"))
        monkeypatch.setenv("MAINBOARD_NVML_LIBRARY", nvml)
        monkeypatch.setenv("MAINBOARD_CUDA_LIBRARY", cuda)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    return use
