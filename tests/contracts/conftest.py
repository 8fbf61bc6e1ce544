"""What the contract tests share: the Dask client of a module's Dask tests."""
import pytest


@pytest.fixture(scope="module")
def client():
    """A local Dask cluster of two single-thread workers in this process, for one test module."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0", host="127.0.0.1", protocol="tcp")
    c = distributed.Client(cluster, set_as_default=False)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
