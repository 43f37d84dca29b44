"""A point of the pias experiment with schemes of one's own, to tell
apart what a result depends on (docs/evaluation.md §3: the cache workload
with `auto`'s learned set fixed, and in adaptive mode with a set that never
changes).

    python3 -m eval.probe --out DIR --workload W --load L [--seeds N]
                          NAME=KEY:VALUE[;KEY:VALUE...] ...

Each NAME runs as the pias experiment's schemes do (eval/run.py
pias_schemes(): its window parameters and 8 queues) with the given
other_config keys on top, under DIR/runs/pias/ as W-loadL-NAME[-seedS], so
that `python3 -m eval.report --out DIR` (or a folder of kept runs they are
copied into) pools them with the rest.  For example, the static thresholds
that `auto` learned:

    python3 -m eval.probe --out DIR --workload cache --load 0.8 --seeds 3 \\
        'static-auto-set=mode:static;thresholds:350,1448,3824,11712,38656,232448,370688'
"""

import argparse
import sys
from pathlib import Path

from eval import run
from testbed.ovs_sandbox import one_switch_per_machine


def scheme(text):
    """'NAME=KEY:VALUE;...' -> (NAME, {KEY: VALUE}) on the pias window."""
    name, _, spec = text.partition("=")
    qos = dict(run.PIAS_QOS)
    for item in filter(None, spec.split(";")):
        key, sep, value = item.partition(":")
        if not sep:
            raise argparse.ArgumentTypeError(f"{item!r}: not KEY:VALUE")
        qos[key] = value
    return name, qos


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--workload", required=True, choices=run.WORKLOADS)
    ap.add_argument("--load", type=float, required=True)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("schemes", nargs="+", type=scheme)
    args = ap.parse_args(argv)
    point = f"{args.workload}-load{round(args.load * 100)}"
    phases = [(args.workload, run.flows_for(args.load,
                                            run.mean_bytes(args.workload)))]
    runs = run.with_seeds(
        [("pias", f"{point}-{name}",
          {"workload": args.workload, "load": args.load, "scheme": name,
           "qos": qos, "phases": phases})
         for name, qos in args.schemes], args.seeds)
    out = Path(args.out)
    todo = run.pending(runs, out)
    print(f"{len(runs) - len(todo)} of {len(runs)} runs already done",
          file=sys.stderr)
    with one_switch_per_machine():
        run.run_all(todo, out)


if __name__ == "__main__":
    main(sys.argv[1:])
