#!/usr/bin/env python3
"""A stand-in for `kforge worker` that misbehaves on demand, for the worker-client tests.

usage: python3 -S fake_worker.py MODE [N]     (-S: start faster; only the stdlib is used)

Answers requests correctly except on request N (1-based, default 1), where MODE decides:
  ok            always answer correctly (timing.median_us echoes config BLOCK_M, if any, or the
                parameter named by KFORGE_FAKE_TIME_PARAM; time_many: that time in every round)
  segv          die by SIGSEGV          exit3   exit with code 3       abort  abort()
  hang          never answer            garbage print a non-JSON line
  wrong_id      answer with another id  wrong_type  answer "times" to evaluate and vice versa
  bad_result    a result without status sticky  answer runtime_fault, then exit
  slow          answer after 0.5 s      chatty  write 256 KiB to stderr, then answer
  hang_child    start a grandchild that sleeps (its pid on stderr), then hang
  stdout_noise  print text to stdout (as a kernel's device printf does), then answer correctly
  exit_after_hello  say hello, then exit 0 at once
and, before any request:
  hello_error   say hello with an error; no_hello  exit 2 before hello; silent  never say hello
KFORGE_FAKE_ENERGY: timings carry power and energy (see timing()).
Several GPUs (`--device I`, appended by the campaign): with KFORGE_FAKE_GPUS=K, a device index
>= K answers hello with "no CUDA device"; with KFORGE_FAKE_LOG=PATH, each evaluate request's
config is appended to PATH.I; KFORGE_FAKE_EVAL_S delays each evaluate answer (seconds).
Replies go to the descriptor KFORGE_PROTOCOL_FD names, as `kforge worker`'s do (stdout when unset).
"""
import json
import os
import signal
import sys
import time

# The timing method this stand-in's results claim, as `kforge worker` puts kf::kTimingMethod
# (src/core/vocabulary.hpp) in every timing: results of another method are stale. Bump it with that
# constant (WorkerClient.FakeWorkerTimesWithTheWorkersMethod checks that they agree).
TIMING_METHOD = 2

DEVICE = {"name": "Fake GPU", "cc_major": 9, "cc_minor": 0, "sm_count": 132,
          "smem_optin": 232448, "driver": "fake"}


def protocol_stream():
    fd = os.environ.get("KFORGE_PROTOCOL_FD")
    return os.fdopen(int(fd), "w") if fd else sys.stdout


PROTOCOL = protocol_stream()


def send(obj):
    PROTOCOL.write(json.dumps(obj) + "\n")
    PROTOCOL.flush()


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def ok_result(req):
    block_m = req.get("config", {}).get(os.environ.get("KFORGE_FAKE_TIME_PARAM", "BLOCK_M"), 1)
    return {"type": "result", "id": req["id"], "status": "ok", "error": "",
            "max_abs": 0.001, "rel_l2": 0.0001, "gate_shapes": 2,
            "timing": timing(float(block_m), req.get("timing", {}).get("energy_ms", 0) > 0)}


def timing(median_us, energy_asked):
    """With KFORGE_FAKE_ENERGY set and energy asked for (timing.energy_ms > 0), power falls with the time squared (1e6 / t^2 W), so the energy of a launch
    (power x time, as the worker computes it) is least for the slowest config: time and energy disagree."""
    t = {"median_us": median_us, "p10_us": 1.0, "p90_us": 2.0, "reps": 10, "launches_per_rep": 100,
         "method": TIMING_METHOD}
    if os.environ.get("KFORGE_FAKE_ENERGY") and energy_asked:
        t["power_w"] = 1e6 / (median_us * median_us)
        t["energy_uj"] = t["power_w"] * median_us
    return t


def device_index():
    return int(sys.argv[sys.argv.index("--device") + 1]) if "--device" in sys.argv else 0


def answer(req):
    if req.get("type") == "evaluate":
        if os.environ.get("KFORGE_FAKE_LOG"):
            with open("%s.%d" % (os.environ["KFORGE_FAKE_LOG"], device_index()), "a") as f:
                f.write(json.dumps(req.get("config"), sort_keys=True) + "\n")
        time.sleep(float(os.environ.get("KFORGE_FAKE_EVAL_S", "0")))
    if req.get("type") == "time_many":
        items = [ok_result(item) for item in req["items"]]
        # Every round times the same, so with the rule on the first batch decides: one config, a tie
        # when the fastest time is shared, else separated.
        rounds, stop = req.get("rounds", 5), "fixed"
        if req.get("until_decided"):
            rounds = min(rounds, req.get("rule", {}).get("first_batch", 5))
            times = sorted(item["timing"]["median_us"] for item in items)
            stop = "one kernel" if len(times) < 2 else ("tie" if times[0] == times[1] else "separated")
        round_us = [[item["timing"]["median_us"]] * rounds for item in items]
        send({"type": "times", "id": req["id"], "items": items, "rounds": rounds, "stop": stop,
              "round_us": round_us})
    else:
        send(ok_result(req))


def misbehave(mode, req):
    if mode == "segv":
        log("fake worker: segfault on request %d" % req["id"])
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode == "exit3":
        log("fake worker: giving up")
        sys.exit(3)
    elif mode == "abort":
        os.abort()
    elif mode == "hang":
        time.sleep(3600)
    elif mode == "hang_child":
        import subprocess  # only here: it is slow to import, and start-up time matters
        child = subprocess.Popen(["sleep", "3600"])
        log("child pid %d" % child.pid)
        time.sleep(3600)
    elif mode == "garbage":
        PROTOCOL.write("this is not json\n")
        PROTOCOL.flush()
    elif mode == "stdout_noise":
        sys.stdout.write("device printf: block 0 thread 0 {not json\n")
        sys.stdout.flush()
        answer(req)
    elif mode == "wrong_id":
        send(dict(ok_result(req), id=req["id"] + 1))
    elif mode == "wrong_type":
        wrong = "result" if req.get("type") == "time_many" else "times"
        send(dict(ok_result(req), type=wrong))
    elif mode == "bad_result":
        bad = ok_result(req)
        del bad["status"]
        send(bad)
    elif mode == "sticky":
        send({"type": "result", "id": req["id"], "status": "runtime_fault",
              "error": "CUDA error: an illegal memory access was encountered"})
        sys.exit(1)
    elif mode == "slow":
        time.sleep(0.5)
        answer(req)
    elif mode == "chatty":
        for i in range(4096):
            sys.stderr.write("chatty line %04d %s\n" % (i, "x" * 46))
        sys.stderr.flush()
        answer(req)
    else:
        log("fake worker: unknown mode " + mode)
        sys.exit(64)


def main():
    mode = sys.argv[1]
    nth = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    if mode == "no_hello":
        log("fake worker: cannot start")
        sys.exit(2)
    if mode == "silent":
        time.sleep(3600)
    if mode == "hello_error" or device_index() >= int(os.environ.get("KFORGE_FAKE_GPUS", "1000000")):
        send({"type": "hello", "error": "no CUDA device available"})
        sys.exit(1)
    send({"type": "hello", "device": DEVICE})
    if mode == "exit_after_hello":
        sys.exit(0)
    count = 0
    for line in sys.stdin:
        count += 1
        req = json.loads(line)
        if mode != "ok" and count == nth:
            misbehave(mode, req)
        else:
            answer(req)


if __name__ == "__main__":
    main()
