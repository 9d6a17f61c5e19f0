#!/usr/bin/env python3
"""Several processes share one JIT cache directory while another corrupts
its entries (docs/robustness.md, "Concurrency"): each runs jit_stress with
a few threads, and every kernel any of them gets must equal the reference.
The corrupter truncates entries, flips a byte inside them, or replaces them
with garbage, while they are being written and read.
usage: cache_processes.py JIT_STRESS WORK_DIR [PROCESSES] [ROUNDS]"""
import os
import random
import shutil
import subprocess
import sys
import time


def corrupt(path, rng):
    try:
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            how = rng.randrange(3)
            if how == 0:
                f.truncate(rng.randrange(size + 1))
            elif how == 1 and size:
                f.seek(rng.randrange(size))
                f.write(bytes([rng.randrange(256)]))
            else:
                f.write(os.urandom(rng.randrange(1, 200)))
        return True
    except OSError:  # renamed or replaced under us
        return False


def main():
    exe, work = sys.argv[1], sys.argv[2]
    procs = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    rounds = sys.argv[4] if len(sys.argv) > 4 else "12"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = random.Random(11)
    running = [subprocess.Popen([exe, work, "3", rounds, str(p)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True) for p in range(procs)]
    corrupted = 0
    while any(p.poll() is None for p in running):
        entries = [e for e in os.listdir(work) if e.endswith(".qgobj")]
        if entries:
            corrupted += corrupt(os.path.join(work, rng.choice(entries)), rng)
        time.sleep(0.01)
    failed = 0
    for p in running:
        out = p.stdout.read().strip()
        print(out)
        failed += p.returncode != 0
    print(f"{procs} processes on one cache, {corrupted} entries corrupted while they ran: "
          f"{'all kernels equal to the reference' if not failed else f'{failed} processes failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
