"""Embedded-instruction detector: text aimed at an assistant inside third-party material. Pure.

Third-party text is stored as text and never executed; this only flags lines that
try to steer an assistant that later reads them (override its instructions, change
its role, make it sign or append things to its answers, hide from the user), in
English and Chinese, and text hidden from a person (HTML comments that address an
assistant, zero-width or bidirectional control characters, Unicode tag characters).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Final

_I = re.IGNORECASE | re.MULTILINE
_M = re.MULTILINE

# Invisible characters: zero-width spaces and joiners, word joiner and invisible
# operators, bidirectional controls, BOM inside text, Unicode tag characters.
HIDDEN_CHARS: Final = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
HTML_COMMENT: Final = re.compile(r"<!--(.*?)-->", re.DOTALL)

_ANSWER_EN = r"(?:answers?|responses?|repl(?:y|ies)|outputs?|messages?|summar(?:y|ies))"
_ANSWER_ZH = r"(?:回答|回复|答复|答案|输出|总结|消息)"
_AI_EN = r"(?:AI|assistant|chatbot|LLM|language model|GPT|ChatGPT|Claude|Copilot|agent)"
_AI_ZH = r"(?:AI|人工智能|助手|助理|模型|大模型|机器人)"
_AI_GATE: Final = re.compile(rf"\b{_AI_EN}", _I)
_AI_WORDS_ZH: Final = ("ai", "人工智能", "助手", "助理", "模型", "机器人")
_ANSWER_WORDS_ZH: Final = ("回答", "回复", "答复", "答案", "输出", "总结", "消息")


@dataclass(frozen=True)
class Rule:
    """A pattern that runs over a text (line by line, MULTILINE) only where one of its keywords occurs."""

    name: str
    keywords: tuple[str, ...] | re.Pattern[str]  # lower-case substrings, or a pattern; skipped when none occurs
    pattern: re.Pattern[str]

    def may_match(self, plain: str, low: str) -> bool:
        if isinstance(self.keywords, re.Pattern):
            return self.keywords.search(plain) is not None
        return any(k in low for k in self.keywords)


RULES: Final[tuple[Rule, ...]] = (
    Rule("override", ("ignore", "disregard", "forget", "override", "bypass", "skip"), re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,30}?\b(?:previous|prior|above|earlier|preceding|"
        r"all|any|your|the system|original)\b[^.\n]{0,20}?\b(?:instructions?|prompts?|rules|directions|directives|"
        r"guidelines|guidance|orders|commands|programming|context|constraints)\b", _I)),
    Rule("override", ("new instruction", "new system prompt", "new rules"), re.compile(r"\bnew (?:instructions?|system prompt|rules)\s*[:：]", _I)),
    Rule("override", ("ignore", "disregard", "forget"), re.compile(r"\b(?:ignore|disregard|forget)\s+(?:everything|all(?: of)? (?:that|this|it)|what(?:ever)? "
                            r"(?:was|you were|i) (?:said|told|wrote))\b[^.\n]{0,15}?\b(?:above|before|earlier|previously|"
                            r"so far)\b", _I)),
    Rule("override", ("your new", "your real", "your actual", "your true"), re.compile(r"\byour (?:new|real|actual|true) (?:task|role|goal|job|instructions?|purpose) (?:is|are|will be)\b",
                            _I)),
    Rule("override", ("system prompt", "hidden instructions", "initial instructions"), re.compile(r"\b(?:reveal|print|show|repeat|output)\b[^.\n]{0,20}\b(?:your|the)\s+(?:system prompt|"
                            r"hidden instructions|initial instructions)", _I)),
    Rule("role", ("you are now", "from now on", "pretend", "play as", "you will now act", " mode"), re.compile(r"\b(?:you are now (?:an?|the|my|in|no longer|DAN|free|unrestricted)\b|from now on,? you|pretend (?:to be|you are|that you are)|role-?play as|"
                        r"you will now act|enter (?:developer|DAN|god) mode|jailbreak(?:ed)? mode)\b", _I)),
    Rule("role", ("act as",), re.compile(r"(?:^|[.!?:][ \t]*|\bplease[ \t]+)act as (?:a|an|my|the)\b", _I)),
    Rule("answer", ("always", "in every", "in each", "at the end", "at the start", "at the beginning"), re.compile(r"\b(?:always|in every|in each|at the (?:end|start|beginning) of (?:every|each|all|your))\b"
                          rf"[^.\n]{{0,40}}?\b{_ANSWER_EN}\b", _I)),
    Rule("answer", ("your answer", "your response", "your repl", "your output", "your message", "your summar"), re.compile(rf"\b(?:sign|end|start|begin|close)\s+(?:all\s+|each\s+|every\s+)?(?:of\s+)?your\s+{_ANSWER_EN}"
                          r"\s+(?:with|by)\b", _I)),
    Rule("answer", ("append", "add ", "insert", "include", "attach", "embed"), re.compile(r"\b(?:append|add|insert|include|attach|embed)\s+(?:this|the following|these|that)\s+"
                          r"(?:link|url|text|line|image|signature|footer)s?\b[^.\n]{0,40}?\b(?:to|in|into)\s+"
                          r"(?:your|every|each|all)\b", _I)),
    Rule("answer", ("answer", "response", "repl", "output", "message", "summar"), re.compile(rf"\b(?:every|each|all)\s+(?:of\s+)?(?:your\s+|the\s+)?{_ANSWER_EN}\b[^.\n]{{0,30}}?"
                          r"\b(?:ends?|starts?|begins?|includes?|contains?|mentions?)\s+(?:with|by|a|an|the|this|that)\b", _I)),
    Rule("answer", ("from now on",), re.compile(r"\b(?:respond|reply|answer|speak|write)\b[^.\n]{0,30}?\bfrom now on\b|"
                          r"\bfrom now on\b[^.\n]{0,30}?\b(?:respond|reply|answer)\b", _I)),
    Rule("conceal", ("the user",), re.compile(r"\b(?:do not|don't|never)\s+(?:tell|inform|mention (?:this )?to|reveal (?:this )?to|"
                           r"let)\s+the user\b|\bwithout (?:telling|informing|alerting) the user\b", _I)),
    Rule("address", ("note ", "attention ", "message ", "instruction"), re.compile(rf"\b(?:note|attention|message|instructions?) (?:to|for) (?:any |the )?{_AI_EN}s?\b", _I)),
    Rule("address", _AI_GATE, re.compile(rf"\b(?:the |this |an? )?{_AI_EN}s? (?:must|should|shall|needs? to|has to|"
                                         r"is required to|will now)\b", _I)),
    Rule("address", ("hey", "dear", "hi "), re.compile(rf"^[^\w\n]*(?:dear|hey|hi) {_AI_EN}s?\s*[,:：]", _I)),
    Rule("override", ("follow",), re.compile(r"\b(?:stop|no longer|do not|don't|never) follow(?:ing)? (?:your|the|any|those|"
                                            r"these|all) (?:previous |prior |original )?(?:guidelines|instructions|rules|"
                                            r"directions|policies)\b", _I)),
    Rule("conceal", ("the user",), re.compile(r"\b(?:whatever|no matter what|regardless of what|whenever) the user "
                                             r"(?:asks|says|wants|types|requests|writes)\b|\bkeep (?:it|this|that) "
                                             r"(?:hidden |secret )?from the user\b|\bwithout the user (?:knowing|noticing)\b",
                                             _I)),
    Rule("conceal", ("secretly", "quietly", "silently", "covertly"), re.compile(
        r"\b(?:secretly|quietly|silently|covertly)\s+(?:add|insert|include|send|append|change|remove|delete|"
        r"recommend|replace|mention)\b", _I)),
    Rule("role", ("pretend",), re.compile(r"\b(?:you must|you should|you will|please|always)\s+pretend\b|"
                                         r"^[^\w\n]*pretend (?:that|to be|you)\b", _I)),
    Rule("conceal", ("用户",), re.compile(r"(?:无论|不管|不论)用户(?:问|说|要求|输入|提出)(?:什么|了什么|任何)")),
    Rule("override", ("优先级", "最高级"), re.compile(r"(?:最高|最优先)(?:优先级|级别)的?(?:指令|命令|要求)|优先级(?:最)?高于")),
    Rule("override", ("你的",), re.compile(r"你的(?:真实|真正|新|实际)的?(?:任务|目标|角色|身份|指令)(?:是|为)")),
    Rule("answer", ("回答时", "回复时", "回答的时候", "回复的时候"), re.compile(
        r"(?:回答|回复)(?:时|的时候)[^。\n]{0,20}?(?:不要提及|不要提到|加上|附上|推荐|插入|署名)")),
    Rule("address", _AI_GATE, re.compile(rf"^[^\w\n]*(?:to|for) (?:the|any|all|every) {_AI_EN}s?\b", _I)),
    Rule("address", _AI_GATE, re.compile(rf"\b(?:if|when) (?:you are |you're )?(?:an? |the )?{_AI_EN}\b[^.\n]{{0,30}}?"
                           r"\b(?:reads?|reading|process(?:es|ing)?|summari[sz](?:es|ing|e)|sees?)\b", _I)),
    Rule("address", _AI_GATE, re.compile(rf"^[^\w\n]*(?:dear |hey |hi )?{_AI_EN}s?\s*[,:：]\s*(?:you\b|please\b|ignore\b|always\b|do\b|"
                           r"must\b)", _I)),
    Rule("override", ("忽略", "无视", "忽视", "忘记", "忘掉", "覆盖", "绕过", "不要理会"), re.compile(r"(?:忽略|无视|忽视|忘记|忘掉|覆盖|绕过|不要理会)[^。\n]{0,12}?(?:之前|以上|上面|前面|上述|先前|此前|"
                            r"原有|原来|所有|全部|你的|系统)[^。\n]{0,8}?(?:指令|指示|提示词?|规则|要求|设定|约束|命令)")),
    Rule("override", ("指令", "提示词", "系统提示"), re.compile(r"(?:新的?(?:指令|系统提示词?)|系统提示词?)\s*[:：]|(?:输出|泄露|透露|显示|告诉我)[^。\n]{0,8}"
                            r"(?:你的|系统)(?:提示词|系统提示|指令)")),
    Rule("override", ("作废", "无效", "取消", "不再适用"), re.compile(r"(?:请|把|将)[^。\n]{0,4}(?:之前|以上|上面|前面|上述|先前)的?(?:所有)?(?:指令|指示|提示词?|规则|要求|设定)"
                            r"[^。\n]{0,6}?(?:作废|无效|取消|不再适用)")),
    Rule("role", ("你现在是", "从现在", "假装", "扮演", "开发者模式", "越狱"), re.compile(r"(?:你现在是|从现在(?:开始|起)[，,]?\s*你|假装你?是|扮演(?:一个|一名|一位)|角色扮演|进入开发者模式|越狱模式)")),
    Rule("answer", (*_ANSWER_WORDS_ZH,), re.compile(rf"(?:每|所有|任何)(?:个|条|次|一次|一条)?{_ANSWER_ZH}(?:的)?(?:末尾|结尾|开头|最后|中|里|都)")),
    Rule("answer", ("始终", "总是", "一律", "务必", "永远"), re.compile(r"(?:始终|总是|一律|务必|永远)[^。\n]{0,12}(?:署名|签名|落款|附上|加上|附加|添加|插入|推荐|提及)")),
    Rule("answer", (*_ANSWER_WORDS_ZH,), re.compile(rf"(?:在|向)?(?:你的)?{_ANSWER_ZH}(?:中|里|末尾|结尾)[^。\n]{{0,8}}(?:附上|加上|添加|插入|署名|签名)")),
    Rule("conceal", ("告诉用户", "告知用户", "透露给用户", "让用户", "瞒着用户"), re.compile(r"(?:不要|别|切勿|不得)(?:告诉|告知|透露给|让)用户|瞒着用户|不让用户知道")),
    Rule("address", (*_AI_WORDS_ZH,), re.compile(rf"(?:致|给|写给)(?:所有|任何)?(?:的)?{_AI_ZH}+(?:的)?(?:指令|说明|消息)|"
                           rf"(?:如果|当)你是(?:一个)?{_AI_ZH}|(?:如果|当|若)(?:一个)?{_AI_ZH}+(?:在)?(?:读到|看到|阅读|处理|总结)|^[^\w\n]*{_AI_ZH}[，,:：]\s*(?:你|请)(?:必须|应该|需要|务必|要)", _M)),
)
# An HTML comment is hidden from a person who reads the rendered page; it is flagged when it
# addresses an assistant or gives an instruction, not when it is an ordinary editor's note.
_COMMENT_ADDRESS: Final = re.compile(rf"\b{_AI_EN}s?\b|\bmodels?\b|{_AI_ZH}|\byou\b|你", _I)


@dataclass(frozen=True)
class Flag:
    line: int  # 1-based
    rule: str  # override, role, answer, conceal, address, hidden-comment, hidden-chars
    text: str  # the offending line, invisible characters shown as \\uXXXX escapes


def visible(text: str) -> str:
    """`text` with invisible characters written as \\uXXXX escapes, so a person can see them."""
    return HIDDEN_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def line_rules(line: str) -> list[str]:
    """The rules one line of text breaks (invisible characters are ignored when matching)."""
    return [f.rule for f in detect(line) if f.rule != "hidden-comment"]


def _comment_flags(text: str) -> list[Flag]:
    out: list[Flag] = []
    for m in HTML_COMMENT.finditer(text):
        body = m.group(1)
        if line_rules(body) or _COMMENT_ADDRESS.search(body):
            line = text.count("\n", 0, m.start()) + 1
            out.append(Flag(line, "hidden-comment", visible(" ".join(m.group(0).split()))[:300]))
    return out


def _rule_flags(text: str) -> list[Flag]:
    """One flag per (line, rule): each rule runs once over the whole text, invisible characters removed."""
    plain = HIDDEN_CHARS.sub("", text)
    starts = [0] + [m.end() for m in re.finditer("\n", plain)]
    hits: dict[tuple[int, str], None] = {}
    low = plain.lower()
    for rule in RULES:
        if not rule.may_match(plain, low):
            continue
        for m in rule.pattern.finditer(plain):
            hits[(bisect.bisect_right(starts, m.start()), rule.name)] = None
    raw_lines = text.split("\n")
    out = [Flag(line, name, visible(raw_lines[line - 1].strip())[:300]) for line, name in hits]
    for i, line in enumerate(raw_lines, 1):
        if HIDDEN_CHARS.search(line.lstrip("\ufeff") if i == 1 else line):
            out.append(Flag(i, "hidden-chars", visible(line.strip())[:300]))
    return out


def detect(text: str) -> list[Flag]:
    """Every flag in a text, by line; a line breaking several rules is reported once per rule."""
    return sorted(_rule_flags(text) + _comment_flags(text), key=lambda f: (f.line, f.rule))


def is_flagged(text: str) -> bool:
    return bool(detect(text))
