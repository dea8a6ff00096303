"""The sanitizer in a test suite: ``pytest --address-sanitize`` (registered by
:mod:`harness.pytest_plugin`), also on by itself under ``address-reuse sanitize -- pytest``.

Each test's matches carry its node id; ``--address-sanitize-fail`` fails the test whose
setup or call produced one; the terminal summary gets a section with the findings and the
verdict. Under pytest-xdist the workers write their data to a folder the controller names in
the environment, and the controller's summary merges them."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from harness.sanitize import difference, runtime
from harness.sanitize.report import merge, read_folder, text

WORKERS_ENV = "ADDRESS_REUSE_SANITIZE_PYTEST"  # the controller's folder for its workers' data


class SanitizePlugin:
    def __init__(self, config):
        self.config = config
        self.fail = config.getoption("--address-sanitize-fail", default=False)
        self.worker = hasattr(config, "workerinput")
        self.folder = None
        if not self.worker:  # a controller, or a run without workers (a pytest inside a test has its own)
            self.folder = tempfile.mkdtemp(prefix="address-reuse-sanitize-pytest-")
            self.outer = os.environ.get(WORKERS_ENV)
            os.environ[WORKERS_ENV] = self.folder  # workers start after configure and inherit it
        runtime.start()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        runtime.set_label(item.nodeid)
        if self.fail:  # what this test adds is judged against this
            item._address_reuse_before = runtime.snapshot()
        yield
        runtime.set_label(None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if call.when != "call" or not self.fail:
            return
        runtime.settle()
        seen = difference(item._address_reuse_before, runtime.snapshot())
        if seen["findings"] and report.outcome != "failed":
            report.outcome = "failed"
            report.longrepr = "address-reuse sanitize: this test made a stale address match\n" + text(seen)

    def pytest_sessionfinish(self, session):
        runtime.settle()
        if self.worker and os.environ.get(WORKERS_ENV):
            runtime.write_data_file(os.environ[WORKERS_ENV])

    def pytest_terminal_summary(self, terminalreporter):
        if self.worker:
            return
        snapshots = [runtime.snapshot()]
        if self.folder:
            snapshots += read_folder(Path(self.folder))
        merged = merge(snapshots)
        terminalreporter.write_sep("=", "address-reuse sanitize")
        terminalreporter.write(text(merged))

    def pytest_unconfigure(self, config):
        runtime.stop()
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            if self.outer is None:
                os.environ.pop(WORKERS_ENV, None)
            else:
                os.environ[WORKERS_ENV] = self.outer
