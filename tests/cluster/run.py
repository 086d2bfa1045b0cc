"""Build the cluster's network, run the driver inside its ``drv`` namespace, tear everything down
(also when the driver fails or hangs), and hand back the driver's report.

    python -m tests.cluster.run [--throughput] [--scenarios worker_partition ...]   # by hand, as root
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.cluster.topology import Cluster

ROOT = Path(__file__).resolve().parents[2]


def run_cluster(scenarios: list[str] | None = None, throughput: bool = False, timeout_s: float = 420,
                workers_per_host: int = 1) -> dict[str, Any]:
    cluster = Cluster()
    run_dir = Path(tempfile.mkdtemp(prefix=f"{cluster.prefix}run-"))
    run_dir.chmod(0o755)  # the postgres user keeps its data below it
    report_path = run_dir / "report.json"
    argv = [sys.executable, "-m", "tests.cluster.driver", "--prefix", cluster.prefix, "--run-dir", str(run_dir),
            "--report", str(report_path), "--workers-per-host", str(workers_per_host)]
    if scenarios is not None:
        argv += ["--scenarios", *scenarios]
    if throughput:
        argv.append("--throughput")
    try:
        cluster.create()
        with open(run_dir / "driver.log", "wb") as log:
            driver = subprocess.run(["ip", "netns", "exec", cluster.ns("drv"), *argv], cwd=ROOT, stdout=log,
                                    stderr=subprocess.STDOUT, timeout=timeout_s, check=False)
        report = json.loads(report_path.read_text()) if report_path.exists() else {}
        report["driver_exit"] = driver.returncode
    except subprocess.TimeoutExpired:
        report = {"error": f"the driver did not finish within {timeout_s} s"}
    finally:
        cluster.destroy()
        shutil.rmtree(run_dir / "pg", ignore_errors=True)  # the database (40 MB); the logs stay
    report["run_dir"] = str(run_dir)
    report["driver_log"] = (run_dir / "driver.log").read_text(errors="replace")[-6000:] \
        if (run_dir / "driver.log").exists() else ""
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", nargs="*")
    parser.add_argument("--throughput", action="store_true")
    parser.add_argument("--workers-per-host", type=int, default=1)
    args = parser.parse_args()
    report = run_cluster(args.scenarios, args.throughput, workers_per_host=args.workers_per_host)
    for entry in report.get("scenarios", []):
        entry.pop("logs", None)
    print(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
