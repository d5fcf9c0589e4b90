"""The memory block quotes, for a session found, the lines of it that bear most on the prompt (turns of a
conversation) with the line after each (the reply), not only its title and summary: the answer reaches the
model."""

from __future__ import annotations

from pathlib import Path

from kbsync.app import sessions
from kbsync.app.recall import memory_block
from kbsync.app.workspace import open_workspace

TURNS = "\n".join([
    "Caroline: Hey Mel! Good to see you! How have you been?",
    "Melanie: Hey Caroline! Good to see you! I'm swamped with the kids & work.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, that's cool, Caroline! What happened that was so awesome?",
    "Caroline: The transgender stories were so inspiring! I was so happy and thankful for all the support.",
])


def test_the_block_quotes_the_line_that_answers(ws_root: Path) -> None:
    ws = open_workspace(str(ws_root), None)
    sessions.save_session(ws, {"session_id": "conv-1", "title": "Caroline and Melanie, session 1",
                               "summary": "They talked about the week.", "sections": {"用户输入": TURNS}})
    sessions.save_session(ws, {"session_id": "conv-2", "title": "Caroline and Melanie, session 2",
                               "summary": "Painting and swimming.",
                               "sections": {"用户输入": "Melanie: I painted a lake sunrise last year."}})
    block = memory_block(ws, "When did Caroline go to the LGBTQ support group?")
    assert "I went to a LGBTQ support group yesterday and it was so powerful." in block.text
    assert block.text.startswith("<kbsync-memory>") and block.tokens <= ws.config.assist.budget_tokens


def test_the_block_quotes_the_reply_to_a_question_the_prompt_echoes(ws_root: Path) -> None:
    ws = open_workspace(str(ws_root), None)
    turns = "\n".join([
        "Melanie: Any news from your research, Caroline?",
        "Caroline: Adoption agencies. I want to give a kid a loving home.",
        "Melanie: That's wonderful. How are the kids?",
        "Caroline: They are great, thanks for asking.",
        "Melanie: Have you finished the painting?",
        "Caroline: Not yet, it needs another week.",
    ])
    sessions.save_session(ws, {"session_id": "conv-3", "title": "Caroline and Melanie, session 3",
                               "summary": "Plans.", "sections": {"用户输入": turns}})
    block = memory_block(ws, "What did Caroline research?")
    line = next(ln for ln in block.text.splitlines() if "session 3" in ln)
    assert "Any news from your research" in line and "Adoption agencies." in line  # the question and its reply
    assert not all(t.split(": ", 1)[1] in line for t in turns.splitlines())  # not the whole session
