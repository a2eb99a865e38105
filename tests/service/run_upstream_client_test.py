#!/usr/bin/env python3
"""ctest driver: starts `ptxbench serve` (fake-evaluator local workers, a fresh service directory, a
free loopback port), runs upstream_client.py's self-test against it, stops the server."""
import argparse, os, re, signal, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--ptxbench", required=True)
p.add_argument("--root", required=True)
a = p.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory(prefix="ptxbench-upstream-client-") as tmp:
    log = open(os.path.join(tmp, "serve.log"), "w+")
    server = subprocess.Popen([a.ptxbench, "--root", a.root, "--cache-dir", os.path.join(tmp, "cache"), "serve",
                               "--listen", "127.0.0.1:0", "--service-dir", os.path.join(tmp, "service"),
                               "--evaluator", "fake", "--fake-gpus", "1", "--lease-ms", "2000", "--backoff-ms", "50"],
                              stderr=log, stdout=log)
    try:
        url = None
        for _ in range(200):
            log.seek(0)
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read())
            if m:
                url = m.group(1)
                break
            if server.poll() is not None:
                break
            time.sleep(0.05)
        if not url:
            log.seek(0)
            sys.exit("serve did not start:\n" + log.read())
        rc = subprocess.call([sys.executable, os.path.join(here, "upstream_client.py"), "--url", url, "self-test"])
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    sys.exit(rc)
