"""``Busy``, the progress a CLI call shows on a terminal (docs/faces.md#progress)."""

from __future__ import annotations

import io
import threading

from sleuth.render.busy import Busy


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_drawn_on_a_pipe_or_for_json() -> None:
    for stream, as_json in ((io.StringIO(), False), (Terminal(), True)):
        busy = Busy(stream, json_output=as_json, delay_s=0)
        assert not busy.active
        busy("building the reference graph", 10, 100)
        busy.close()
        assert stream.getvalue() == ""


def test_a_step_shorter_than_the_delay_draws_nothing() -> None:
    stream = Terminal()
    busy = Busy(stream, json_output=False, delay_s=30)
    busy("starting the ty language server", 0, 0)
    busy("", 0, 0)
    busy.close()
    assert stream.getvalue() == ""


def test_a_long_step_is_drawn_with_its_name_and_count() -> None:
    stream = Terminal()
    busy = Busy(stream, json_output=False, delay_s=0)
    shown = threading.Event()
    busy("building the reference graph", 0, 300)
    for _ in range(200):  # the bar appears on its timer thread
        if busy._progress is not None:
            shown.set()
            break
        threading.Event().wait(0.01)
    busy("building the reference graph", 128, 300)
    busy.close()
    assert shown.is_set()
    text = stream.getvalue()
    assert "building the reference graph" in text
    assert "128/300" in text or "0/300" in text


def test_reports_after_close_are_ignored() -> None:
    stream = Terminal()
    busy = Busy(stream, json_output=False, delay_s=0)
    busy.close()
    busy("indexing", 1, 2)
    assert stream.getvalue() == "" and busy._progress is None
