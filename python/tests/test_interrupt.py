"""Heavy work releases the GIL, and Ctrl-C interrupts it with KeyboardInterrupt; the session goes
on afterwards (the library's stop request is cleared)."""

import signal
import subprocess
import sys
import textwrap
import threading
import time

import evalsim

CHILD = textwrap.dedent(
    """
    import sys, time
    import evalsim
    print("start", flush=True)
    t = time.monotonic()
    try:
        evalsim.plan(simulate_reruns=1_000_000, problems=[100, 300], samples=[1, 4])
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted after {time.monotonic() - t:.2f} s", flush=True)
    after = evalsim.plan(problems=[30], samples=[1], simulate_reruns=1000)
    print("after", after.passed, flush=True)
    """
)


def test_ctrl_c_interrupts_a_long_plan_and_the_session_goes_on():
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "start"
    time.sleep(1.5)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=600)
    waited = time.monotonic() - sent
    assert "finished" not in out, out
    assert "interrupted after" in out and "after True" in out, (out, err)
    # The plan stops between batches of its simulation: within seconds, even on a loaded machine
    # (the follow-up plan is included in this time).
    assert waited < 60, waited


def test_heavy_work_releases_the_gil():
    ticks = []
    done = threading.Event()

    def work():
        evalsim.plan(simulate_reruns=2000, problems=[100], samples=[1, 4])
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    while not done.is_set():
        ticks.append(time.monotonic())
        time.sleep(0.001)
    worker.join()
    assert len(ticks) > 50, len(ticks)
    longest = max(b - a for a, b in zip(ticks, ticks[1:]))
    # With the GIL held through the computation this thread would stall for all of it.
    assert longest < 0.25, longest
