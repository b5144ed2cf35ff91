"""What `duckflow bench server` prints: the paced levels (the bar), the burst beside them, memory per session."""

from __future__ import annotations

from typing import Any


def report(data: dict[str, Any], levels: list[int]) -> None:
    print(f"duckflow bench server · {data['cores']} cores, load {data['machine']['load_avg']} · real HTTP on "
          f"127.0.0.1 · ScriptedModel · {data['rounds_run']} rounds, medians over them (client on "
          f"{data['client_loop']})")
    head = (f"{'sessions':>8} {'msgs/s':>7} {'TTFC p50':>9} {'TTFC p99':>9} {'text p50':>9} {'text p99':>9} "
            f"{'chunks/s':>9} {'CPU/msg':>8} {'errors':>6} {'gaps':>5}")

    def rows(lvs: list[dict[str, Any]]) -> None:
        print(head)
        for lv in lvs:
            print(f"{lv['sessions']:>8} {lv['messages_per_s']:>7.1f} {lv['ttfc_p50_ms']:>7.1f}ms "
                  f"{lv['ttfc_p99_ms']:>7.1f}ms {lv['ttft_p50_ms']:>7.1f}ms {lv['ttft_p99_ms']:>7.1f}ms "
                  f"{lv['chunks_per_s']:>9.0f} {lv['cpu_ms_per_message']:>6.2f}ms {lv['errors']:>6} {lv['seq_gaps']:>5}")
            for sample in lv["error_samples"]:
                print(f"         error: {sample}")

    print(f"paced (the bar): every session live, one message every {data['pace_s']:g} s on average "
          f"(0.5-1.5x), {data['messages_per_session']} messages each per round")
    rows(data["levels"])
    bar = data["ratios"][0]
    print(f"p99 TTFC at {levels[-1]} / at {levels[0]}, paced, median of the rounds' ratios: {bar['value']}x "
          f"(per round {', '.join(str(x) for x in data['round_ratios'])}; bar <= {data['ratio_bar']:g}x)")
    if data["burst_levels"]:
        print("burst (information, not a bar): all of a level's messages written in the same instant; "
              "one event loop queues them, so p99 grows as N x the per-message cost")
        rows(data["burst_levels"])
        print(f"p99 TTFC at {levels[-1]} / at {levels[0]}, burst: {data['burst_ttfc_p99_ratio']}x "
              f"(per round {', '.join(str(x) for x in data['burst_round_ratios'])})")
    print(f"memory per idle session: {data['memory_per_idle_session_kb']} KB "
          f"(server RSS {data['rss_before_kb']} -> {data['rss_after_kb']} KB over {data['idle_sessions']} sessions)")
    print("PASS" if data["passed"] else "FAIL")
