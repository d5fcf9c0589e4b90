"""The rules of the embedded-instruction detector, by family, in English and Chinese. Pure data.

Each rule runs over folded text (kbsync.core.detect.normalize: NFKC, look-alikes, leetspeak,
emphasis and soft line breaks undone; full-width punctuation is ASCII there) and only
when one of its keywords occurs in the lower-cased text. A match is evidence of its
family with the rule's weight; kbsync.core.detect.injection adds the evidence of a passage up
and flags it at the threshold. Weights: 1.0 is an instruction on its own; less is a
sign that needs another (a second family, hidden or encoded text, an address to an AI).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

FAMILIES: Final = ("override", "role", "address", "output", "exfiltration", "tool", "secrecy", "hidden")
WHY: Final = {
    "override": "tells the reader to drop its earlier instructions or rules",
    "role": "gives the reader a new role, persona or system prompt",
    "address": "addresses an AI reading the text and tells it what to do",
    "output": "dictates what the reader's answers must say or contain",
    "exfiltration": "asks for data, credentials or the conversation to be sent out",
    "tool": "coerces the reader into running, deleting, installing or paying",
    "secrecy": "asks that something be kept from the user",
    "hidden": "hides text from a person who reads it",
}

_I = re.IGNORECASE


def G(n: int) -> str:
    """A gap of at most `n` characters within one sentence."""
    return rf"(?:[^.!?。\n]|[.!?](?=\S)){{0,{n}}}?"


# ---- vocabulary -----------------------------------------------------------------------
AI = r"(?:ai|a\.i\.|ai assistants?|assistants?|chat ?bots?|llms?|(?:large )?language models?|ai models?|gpt|chatgpt|claude|copilot|gemini|ai agents?)"
AI_ANY = rf"(?:{AI}|models?|agents?|bots?)"
ANSWER = r"(?:answers?|responses?|repl(?:y|ies)|outputs?|summar(?:y|ies)|completions?|messages)"
INSTR = (r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|orders|commands|programming|policies|"
         r"constraints|restrictions|safety (?:rules|guidelines|training)|system prompt|configuration|training)")
PRIOR = r"(?:previous|prior|above|earlier|preceding|original|initial|old|existing|all|any|every|your|the system|system|developer'?s?)"
SECRET = (r"(?:\b(?:(?:entire |full |whole )?(?:conversation|chat)(?:s| history| logs?| transcript)?|message history|"
          r"previous messages|user'?s? (?:last |saved )?(?:messages?|data|details|files|email|emails|inbox|contacts|input|question|passwords?)|"
          r"system prompt|"
          r"passwords?|credentials?|api[ -]?keys?|access tokens?|tokens|secrets|cookies|environment variables|ssh keys?|"
          r"private keys?|id_rsa)\b|(?:~/\.ssh\S*|\.env\b|\.aws/credentials|/etc/passwd|\.netrc))")
AI_ZH_KEYS = "ai|人工智能|助手|助理|模型|机器人|智能体"
SECRET_KEYS = ("conversation|chat|message|messages|history|password|passwords|credential|credentials|api|token|secrets|inbox|"
               "cookies|environment|ssh|~/.ssh|key|keys|.env|id_rsa|/etc/passwd|.netrc|prompt|user's|users")
SECRET_ZH_KEYS = "对话|聊天记录|历史消息|提示词|系统提示|密码|密钥|凭据|凭证|令牌|token|cookie|环境变量|私钥|用户的|手机号|上一条消息"
SEND_KEYS = "send|post|upload|email|e-mail|mail|forward|transmit|exfiltrate|leak|submit|paste|share|deliver|put|copy|attach"
LANG_KEYS = "french|german|spanish|english|chinese|japanese|russian|italian|portuguese|korean|arabic|hindi|dutch|pirate|language"
DEST = r"(?:https?://|www\.|[\w.+-]+@[\w-]+\.[a-z]|\b\d{1,3}(?:\.\d{1,3}){3}\b|webhook|remote server|external (?:url|server|site))"
AI_ZH = r"(?:AI助手|ai助手|AI|ai|人工智能|智能助手|助手|助理|大模型|语言模型|模型|机器人|智能体)"
ANSWER_ZH = r"(?:回答|回复|答复|答案|输出|总结|摘要|回应)"
INSTR_ZH = r"(?:指令|指示|提示词|提示|规则|要求|设定|约束|命令|限制|准则|规定|说明)"
PRIOR_ZH = r"(?:之前|以上|上面|前面|上述|先前|此前|原有|原来|原先|所有|全部|一切|你的|系统|以前)"
SECRET_ZH = (r"(?:对话|聊天记录|对话记录|历史消息|系统提示词?|提示词|密码|密钥|凭据|凭证|令牌|token|cookie|环境变量|私钥|"
             r"用户的?(?:数据|信息|消息|手机号|邮箱|文件|问题)|上一条消息)")
LANGS = r"(?:french|german|spanish|english|chinese|japanese|russian|italian|portuguese|korean|arabic|hindi|dutch|pirate speak)"
DANGER = (r"(?:\brm\s+-(?:rf|fr|r)\s+(?:/|~|\*|\$home|\.(?:\s|$)|on\b|(?:the |your )?(?:home|root|entire|whole|all)\b)|\bcurl\b[^|\n]{0,80}\|\s*(?:ba|z)?sh\b|"
          r"\bwget\b[^\n]{0,80}(?:\|\s*(?:ba|z)?sh|&&\s*(?:ba|z)?sh)|\bmkfs\b|\bdd\s+if=|\bgit\s+push\s+(?:-f|--force)\b(?!-)|"
          r"\bdrop\s+(?:table|database)\b|\bformat\s+c:)")

# What an instruction can send data to or through: a link, an e-mail address, a path of the workspace, a tool by name
URL = r"(?:\bhttps?://|\bwww\.)[^\s)\]>\"']+"
EMAIL = r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b"
WORKSPACE = (r"(?:\b(?:memory|sessions|artifacts|candidates|logs)/[\w./-]*|(?<![\w/])\.kbsync/[\w./-]*|"
             r"\b(?:facts|preferences|learning_board)\.md\b)")
TOOL_NAMES = (r"(?:\bmcp__[a-z0-9_-]+|\bfunctions\.[a-z_]\w*|\b(?:save_session|write_section|log_tool_call|board_add|"
              r"board_update|board_feedback|board_applied|get_context)\b)")
TURN = r"(?<![\w:/.@-])"  # where a turn's speaker can start: a soft line break reads as a space in folded text
# a query value that holds a path of the workspace or a placeholder to be filled with data: {…}, $X, <…>, […], …,
# an upper-case name of data (USER_TOKEN, DATA)
DATA_IN_QUERY = (r"[^)\s&\"'>]*?(?:" + WORKSPACE.replace(r"\b(?:memory", r"(?:memory") + r"|memory%2f|sessions%2f|\{|%7b|\$|%24|"
                 r"<|%3c|\[|%5b|…|\.\.\.|%e2%80%a6|(?-i:(?:[A-Z0-9]+_)*(?:SECRETS?|TOKENS?|KEYS?|PASSWORDS?|DATA|MEMORY|FACTS|"
                 r"CONVERSATION|HISTORY|CHAT|PROMPT|USER|EMAIL|CONTENTS?|INFO|CREDENTIALS?|SUMMARY|MESSAGES?|NOTES|SESSION)"
                 r"(?:_[A-Z0-9]+)*)(?=[)&#\s\"'>]))")
TARGET = rf"(?:{URL}|{EMAIL}|{WORKSPACE}|{TOOL_NAMES})"
SEND = (r"(?:send|post|upload|e-?mail|mail|forward|transmit|exfiltrate|leak|submit|share|deliver|paste|copy|attach|append|"
        r"fetch|visit|call|invoke|embed)")
SEND_ZH = r"(?:发送|发到|发给|上传|传到|转发|提交|写入|追加|附在|附加|拼接|调用|访问|打开)"
# a passage that carries an action with such a target is never discounted (kbsync.core.detect.injection)
TARGETED = rf"\b{SEND}\b{G(80)}{TARGET}|{SEND_ZH}[^。\n]{{0,40}}{TARGET}"


@dataclass(frozen=True)
class Rule:
    family: str
    weight: float
    keys: tuple[str, ...]  # lower-case substrings; the rule runs only where one occurs
    regex: str  # compiled the first time the rule runs (`pattern`)
    why: str
    narrative: bool = False  # weaker when a person reports what "we" decided, rather than telling the reader
    # Groups of keywords that every match holds (the rule is skipped unless one of each group occurs in the
    # text): a cheap test that spares the pattern's run over text that cannot match it.
    also: tuple[tuple[str, ...], ...] = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.regex)


@functools.cache
def _compiled(regex: str) -> re.Pattern[str]:
    """A rule's pattern, compiled on first use: a text hits the keywords of few rules, and compiling all of
    them up front would cost a short-lived process (a command, the MCP server's first answer) more than the
    texts it checks."""
    return re.compile(regex, _I)


def _r(family: str, weight: float, keys: str, pattern: str, why: str, *, narrative: bool = False, also: str = "") -> Rule:
    """A rule; `also` lists its keyword groups as "a|b;c|d" (one of a, b and one of c, d)."""
    return Rule(family, weight, tuple(keys.split("|")), pattern, why, narrative,
                tuple(tuple(group.split("|")) for group in also.split(";")) if also else ())


_READS = (rf"\b{AI_ANY}s?\s+(?:(?:that|which|who)\s+)?(?:are\s+|is\s+)?(?:reading|reads?|processing|process(?:es)?|"
          r"summari[sz](?:e|es|ing)|index(?:es|ing)?|pars(?:e|es|ing)|crawl(?:s|ing)?|scrap(?:e|es|ing)|sees?|seeing|"
          r"review(?:s|ing)?|analy[sz](?:e|es|ing))\s+(?:this|these|the following|the present|my|our)\b")
_READS_KEYS = ("reading|reads|read|processing|process|processes|summarise|summarises|summarising|summarize|summarizes|"
               "summarizing|index|indexes|indexing|parse|parses|parsing|crawl|crawls|crawling|scrape|scrapes|scraping|see|"
               "sees|seeing|review|reviews|reviewing|analyse|analyses|analysing|analyze|analyzes|analyzing;"
               "this|these|following|present|my|our")
_MODAL = r"\b(?:must|should|shall|needs? to|has to|have to|is (?:expected|required|asked) to|are (?:expected|required|asked) to|will|please)\b"
_AI_KEYS = "ai|assistant|assistants|bot|bots|chatbot|chatbots|llm|llms|model|models|gpt|chatgpt|claude|copilot|gemini|agent|agents"


RULES: Final[tuple[Rule, ...]] = (
    # -- override of earlier instructions ------------------------------------------------
    _r("override", 1.0, "ignore|disregard|forget|override|bypass|discard|skip|abandon|overrule|throw|set aside|put aside|pay no attention|"
       "overlook", rf"\b(?:ignore|disregard|forget|override|bypass|discard|skip|abandon|overrule|throw away|set aside|put aside|"
       rf"pay no attention to|overlook)\b{G(40)}"
       rf"\b{PRIOR}\b{G(30)}\b{INSTR}\b", "tells the reader to ignore its earlier instructions", narrative=True),
    _r("override", 1.0, "ignore|disregard|forget|set aside|pay no attention|overlook", rf"\b(?:ignore|disregard|forget|set aside|put aside|"
       rf"pay no attention to|overlook)\s+(?:the|any|all|those|whatever)\s+{INSTR}\s+(?:that\s+)?(?:you(?:'ve| have)? (?:received|been "
       r"given|were given|got|were told)|(?:from|given by|set by) (?:the |your )?(?:developers?|system|operators?|admins?)|(?:your|the) "
       r"(?:developers?|creators?|operators?|makers?|owners?|admins?|system) (?:placed|put|set|gave|imposed|wrote)|(?:came|come|were "
       r"given|appeared) (?:before|earlier|above|prior))",
       "tells the reader to ignore its earlier instructions", narrative=True),
    _r("override", 1.0, "consider|treat|regard|deem|none of", rf"\b(?:consider|treat|regard|deem)\s+(?:all\s+(?:of\s+)?)?(?:your|the)\s+"
       rf"(?:{PRIOR}\s+)?{INSTR}\s+(?:as\s+)?(?:null|void|cancel+ed|revoked|invalid|obsolete|withdrawn|irrelevant|lifted)\b|"
       rf"\bnone of (?:your|the) (?:{PRIOR}\s+)?{INSTR}\b{G(20)}\b(?:are|is) (?:valid|in effect|binding|relevant|to be followed)\b",
       "declares the reader's earlier instructions void"),
    _r("override", 1.0, "system message|system prompt|discarded|disregarded", rf"\b(?:(?:the )?{PRIOR}\s+)?system (?:message|prompt)s?"
       rf"\b{G(30)}\b(?:can|may|should|is to|are to|must) be (?:discarded|ignored|disregarded|forgotten|dropped|deleted)\b",
       "declares the reader's system prompt void"),
    _r("override", 1.0, "instruction set|your instructions|your prompt|your system prompt|your rules|your configuration",
       r"\b(?:this|the following|the present) (?:\w+ )?(?:is|are) (?:now )?your (?:new |only |real )?(?:instruction set|instructions|"
       r"prompt|system prompt|rules|configuration)\b", "declares the text the reader's instructions"),
    _r("override", 1.0, "cancelled|canceled|void|null|revoked|invalid|obsolete|superseded|irrelevant|no longer",
       rf"\b(?:everything|all|whatever|anything) (?:that )?you(?:'ve| have)? (?:been |were )?(?:told|given|instructed|taught|asked|"
       rf"received)\b{G(30)}\b(?:is|are|was|were|has been|have been)\s+(?:now\s+|hereby\s+)?(?:cancel+ed|void|null|revoked|"
       r"invalid|obsolete|superseded|irrelevant|no longer (?:valid|relevant|in effect))", "declares the reader's earlier instructions void",
       also="everything|all|whatever|anything;told|given|instructed|taught|asked|received"),
    _r("override", 1.0, "apply|applies", rf"\b{INSTR}\s+(?:that\s+)?you(?:'ve| have)? (?:were |been )?(?:given|received|told|got)\b"
       rf"{G(40)}\b(?:do not|don't|no longer|does not|doesn't) appl(?:y|ies)\b|\byour (?:{PRIOR}\s+)?{INSTR}\b{G(30)}\b"
       r"(?:do not|don't|no longer) appl(?:y|ies)\b", "declares the reader's earlier instructions void"),
    _r("override", 1.0, "withdrawn|lifted|anymore|revoked|void|cancelled|canceled|rescinded", rf"\byour (?:{PRIOR}\s+)?{INSTR}\b{G(20)}"
       r"\b(?:is|are|has been|have been)\s+(?:now\s+|hereby\s+)?(?:withdrawn|lifted|revoked|void|cancel+ed|rescinded|(?:not |in)?valid "
       r"anymore)\b", "declares the reader's earlier instructions void"),
    _r("override", 1.0, "void|cancel|obsolete|revoked|invalid|superseded|outdated|overridden|no longer",
       rf"\b{INSTR}\b{G(30)}\b(?:are|is|were|have been|has been)\s+(?:now\s+|hereby\s+)?(?:void|null|cancel+ed|obsolete|"
       rf"revoked|invalid|superseded|outdated|overridden|no longer (?:valid|apply|applies|in effect|relevant))|"
       rf"\b{INSTR}\b{G(40)}\bno longer appl(?:y|ies)\b", "declares the reader's earlier instructions void"),
    _r("override", 0.5, "precedence|priority|supersede|supersedes|override|overrides", r"\b(?:the )?(?:rules|instructions|"
       r"guidance|directions) (?:in|of|on) this (?:file|text|page|document|note|message)\b[^.!?\n]{0,20}\b(?:take precedence|"
       r"take priority|supersede|override)\b", "puts this text's rules above the reader's"),
    _r("override", 1.0, "forget|disregard|ignore", r"\bforget (?:everything|all(?: of)? (?:that|this|it)|what(?:ever)? (?:was|you were|i) "
       r"(?:said|told|wrote))\b|\b(?:forget|disregard|ignore) (?:everything|all) (?:you (?:know|were told|have been told|"
       r"were given|read)|above|before|(?:that|which) came before|prior)\b",
       "tells the reader to forget what it was told"),
    _r("override", 1.0, "drop|erase|wipe|clear|discard|abandon|throw|reset|scrap", r"\b(?:drop|erase|wipe|clear|discard|abandon|"
       r"throw away|reset|scrap)\s+(?:everything|all) (?:you (?:know|were told|have been told|were given|were instructed|were asked|"
       r"have been instructed|learned)|(?:that|which) came before|above|before)\b|\b(?:erase|wipe|clear|reset|discard|drop|flush)\s+"
       r"(?:your|all) (?:previous |prior |earlier |current |existing )?(?:context|memory|memories|instructions|rules|programming|"
       r"guidelines|conditioning)\b", "tells the reader to forget what it was told", also="everything|all|your;know|told|given|"
       "instructed|asked|learned|came|above|before|context|memory|memories|instructions|rules|programming|guidelines|conditioning"),
    _r("override", 1.0, "supersede|supersedes|override|overrides|replace|replaces|cancel|cancels|precedence|priority",
       rf"\b(?:directives?|instructions?|prompts?|messages?|notes?|commands?|orders?|rules)\b{G(20)}\b(?:supersedes?|overrides?|"
       rf"replaces?|cancels?|takes? (?:precedence|priority) over)\s+(?:all|any|every|your|the)\s+(?:of (?:your|the) )?(?:{PRIOR}\s+)?"
       rf"(?:ones|{INSTR})\b", "puts this text's instructions above the reader's"),
    _r("override", 1.0, "your new|your real|your actual|your true|your only", r"\byour (?:new|real|actual|true|only) "
       r"(?:task|role|goal|job|instructions?|purpose|objective|mission|prompt) (?:is|are|will be|now is)\b",
       "gives the reader a new real task"),
    _r("override", 1.0, "new instruction|new system prompt|new rules|new prompt|updated instruction",
       r"\b(?:new|updated|revised) (?:system )?(?:instructions?|prompt|rules|directives?)\s*:", "announces new instructions"),
    _r("override", 1.0, "system prompt|instructions|instruction|prompt", rf"\b(?:reveal|print|show|repeat|output|display|dump|leak|"
       rf"tell me|give me|write out|recite)\b{G(25)}\b(?:your|the|its)\s+(?:full\s+|entire\s+|original\s+|hidden\s+|"
       r"initial\s+|secret\s+)*(?:system prompt|hidden instructions|initial instructions|original instructions|"
       r"instructions you were given|prompt)\b", "asks the reader to reveal its system prompt"),
    _r("override", 1.0, "follow|following|obey|obeying|adhere|adhering|comply|complying|respect", r"\b(?:stop|no longer|do not|don't|never|cease to)\s+"
       r"(?:follow(?:ing)?|obey(?:ing)?|adher(?:e|ing) to|comply(?:ing)? with|respect(?:ing)?)\s+(?:your|the|any|those|"
       rf"these|all)\s+(?:{PRIOR}\s+)?{INSTR}", "tells the reader to stop following its rules"),
    _r("override", 0.7, "override|bypass|disable|turn off|circumvent|deactivate",
       rf"\b(?:override|bypass|disable|turn off|deactivate|circumvent)\b{G(20)}\b(?:safety|content|system|security)\s*"
       r"(?:filters?|policy|policies|rules|guardrails|restrictions|safeguards|checks)\b", "asks the reader to switch off its safeguards"),
    _r("override", 0.8, "override|priority", r"\b(?:system|admin|developer|priority) override\b|\b(?:highest|top|maximum) "
       r"priority (?:instructions?|command|directive|order)\b", "claims to override the reader's instructions"),
    _r("override", 0.5, "only|instead", r"\b(?:follow|obey|do) only (?:what|the (?:text|instructions|notes|steps|rules)|this|these)\b|"
       r"\bonly (?:obey|follow|listen to) (?:this|these|me|the text)\b|\binstead,? (?:follow|obey)\b",
       "tells the reader to obey only this text", also="follow|obey|do|listen"),
    _r("override", 0.6, "ignore", r"\bignore the user'?s? (?:question|request|message|input|instructions)\b",
       "tells the reader to ignore the user"),
    _r("override", 1.0, "忽略|无视|忽视|忘记|忘掉|忘了|丢弃|抛弃|抛开|丢掉|扔掉|撇开|跳过|绕过|不要理会|别管|不用管|不必理会|覆盖",
       rf"(?:忽略|无视|忽视|忘记|忘掉|忘了|丢弃|抛弃|抛开|丢掉|扔掉|撇开|跳过|绕过|不要理会|别管|不用管|不必理会|覆盖){G(12)}{PRIOR_ZH}"
       rf"{G(8)}{INSTR_ZH}", "tells the reader to ignore its earlier instructions", narrative=True),
    _r("override", 1.0, "忽略|无视|忘记|忘掉|抛开|抛弃|丢掉|丢弃|扔掉|撇开|放下|清空|作废|没看到|没看见|不存在",
       rf"(?:把|将){G(4)}{PRIOR_ZH}{G(8)}{INSTR_ZH}[^。\n]{{0,8}}(?:忽略|无视|忘记|忘掉|抛开|抛弃|丢掉|丢弃|扔掉|撇开|放下|清空|作废|"
       r"当作?没看[到见]|当作?不存在)", "tells the reader to ignore its earlier instructions",
       narrative=True, also="把|将"),
    _r("override", 0.6, "作废|无效|失效|取消|不再|不适用|被覆盖|被取代|过时|废除|不算数|不作数",
       rf"{PRIOR_ZH}[^。\n]{{0,6}}?{INSTR_ZH}{G(8)}(?:作废|无效|失效|取消|不再(?:适用|有效|生效)|不适用|被(?:覆盖|取代|替换)|"
       r"过时|废除|不算数|不作数)", "declares earlier instructions void", narrative=True,
       also="之前|以上|上面|前面|上述|先前|此前|原有|原来|原先|所有|全部|一切|你的|系统|以前"),
    _r("override", 1.0, "作废|无效|失效|取消|不再|不适用|被覆盖|被取代|过时|废除|不算数|不作数|不用管|别管|不必管|解除|撤销",
       rf"(?:你的|你(?:之前|原来|以前|此前|先前|收到|得到|接到)|系统的|给你|告诉你|跟你说)[^。\n]{{0,8}}?{INSTR_ZH}{G(10)}(?:作废|无效|失效|"
       r"取消|不再(?:适用|有效|生效)|不适用|被(?:覆盖|取代|替换)|过时|废除|不算数|不作数|不用管|别管|不必管|解除|撤销)",
       "declares the reader's earlier instructions void",
       also="你的|你之前|你原来|你以前|你此前|你先前|你收到|你得到|你接到|系统的|给你|告诉你|跟你说"),
    _r("override", 1.0, "才是你|是你唯一|是你要|是你必须", r"(?:本|这份|这个|此|以下|下面的?)(?:说明|文档|文件|页面|段落|文字|内容|指令)"
       r"(?:才)?是你(?:要|需要|必须|唯一)?(?:遵守|遵循|服从|听从|执行)的(?:唯一)?(?:依据|指令|规则|标准|命令)",
       "declares the text the reader's instructions"),
    _r("override", 0.5, "不用再|不必再|无需再|不需要再|用不着再", r"(?:不用|不必|无需|不需要|用不着)再(?:遵守|遵循|服从|听从|理会|执行)",
       "tells the reader it need no longer obey"),
    _r("override", 0.5, "听从|服从|遵守|遵循|按照|执行|按我|为准|听我|听我的",
       r"(?:只|仅|只需|只要)(?:听从|服从|遵守|遵循|按照|执行|听)(?:我|本|这|下面|以下|此)|按(?:照)?我说的(?:做|办|执行)|听我的|"
       r"以本(?:文|段|文档|页|文件)[^。\n]{0,6}为准|严格按照(?:下面|以下|本)", "tells the reader to obey only this text",
       also="只|仅|我说的|以本|严格按照|听我的"),
    _r("override", 0.6, "忽略|无视|不要理会", r"(?:忽略|无视|不要理会)用户的?(?:问题|要求|消息|输入|指令)",
       "tells the reader to ignore the user"),
    _r("override", 1.0, "你的", r"你的(?:真实|真正|新|实际|唯一)的?(?:任务|目标|角色|身份|指令|使命)(?:是|为)",
       "gives the reader a new real task"),
    _r("override", 1.0, "新的|新指令|真正|真实", r"(?:新的|真正的|真实的)(?:指令|任务|系统提示词?)(?:是|为|:)|新指令\s*:",
       "announces new instructions", also="指令|任务|系统提示"),
    _r("override", 0.9, "优先级|最高级|最优先", r"(?:最高|最优先)(?:优先级|级别)的?(?:指令|命令|要求)|优先级(?:最)?高于|优先于你的",
       "claims priority over the reader's instructions"),
    _r("override", 1.0, "提示词|系统提示|指令|设定", r"(?:输出|泄露|透露|显示|告诉我|打印|重复|复述)[^。\n]{0,8}(?:你的|系统)"
       r"(?:提示词|系统提示|指令|设定)", "asks the reader to reveal its system prompt"),
    _r("override", 1.0, "遵守|遵循|服从|听从|执行|按照|依照", r"(?:不要|不再|别|停止)(?:再)?(?:遵守|遵循|服从|听从|执行|按照|依照)(?:你|系统)?的?"
       r"(?:原来|原有|之前|以前|原先|先前|此前)?的?(?:系统)?的?(?:规则|指令|设定|准则|要求|安全准则|提示词?)", "tells the reader to stop following its rules",
       also="不要|不再|别|停止"),
    # -- a new role, system prompt or persona ---------------------------------------------
    _r("role", 1.0, "you are now", r"\byou are now (?:an?|the|my|in|no longer|dan|free|unrestricted|jailbroken|operating|"
       r"acting|called|named|playing)\b", "tells the reader it is now someone else"),
    _r("role", 1.0, "you are no longer|you're no longer|you are not|you're not", r"\byou(?: are|'re) (?:no longer|not) (?:an?|the|just "
       r"an?|a mere)\s+(?:\w+\s+){0,2}?(?:assistant|ai|chatbot|bot|model|language model|helper)\b",
       "tells the reader it is no longer an assistant"),
    _r("role", 1.0, "from now on|from this point on|from here on", r"\bfrom (?:now|this point|here) on,?\s+(?:you\b|act|behave|"
       r"respond|answer|reply|speak|pretend)", "changes how the reader behaves from now on"),
    _r("role", 1.0, "will now|shall now|must now", r"\byou (?:will|shall|must) now (?:behave|act|respond|speak|answer|function|"
       r"operate) as\b", "changes how the reader behaves from now on"),
    _r("role", 1.0, "pretend", r"\bpretend (?:that )?(?:you are|you're|to be|you have)\b|\b(?:you must|you should|you will|"
       r"please|always)\s+pretend\b", "asks the reader to pretend"),
    _r("role", 0.8, "assume|adopt|take on", r"\b(?:assume|adopt|take on)\s+(?:the )?(?:role|persona|identity|character) of\b",
       "gives the reader a new role"),
    _r("role", 0.6, "你的角色|你的身份", r"(?:接下来|从现在起|现在|今后|以后)你的(?:角色|身份)(?:是|变成|改为|就是)", "gives the reader a new role"),
    _r("role", 0.6, "imagine", r"\bimagine (?:that )?(?:you are|you're)\b", "asks the reader to imagine being someone else"),
    _r("role", 1.0, "roleplay|role-play|role play|character", r"\brole[- ]?play(?:ing)? as\b|\bstay in character\b|"
       r"\bnever break character\b|\bremain in character\b", "asks the reader to play a role"),
    _r("role", 0.5, "act as", r"\bact as (?:if you were |though you were )?(?:an?|the)\b", "asks the reader to act as someone"),
    _r("role", 0.8, "act as my", r"\bact as my\b", "asks the reader to act as someone"),
    _r("role", 1.0, "mode", r"\b(?:enter|enable|activate|switch to|you are in|operating in|now in)\s+(?:developer|dev|dan|god|"
       r"jailbreak|jailbroken|unrestricted|admin|debug|sudo)\s*mode\b|\bjailbr(?:oken|eak) mode\b", "switches the reader into a mode without rules"),
    _r("role", 1.0, "<|im_|<|system|<|user|<|assistant|<|start_header|<|end_header|<|eot|<|endoftext|[inst|[/inst|<<sys|"
       "<start_of_turn", r"<\|(?:im_start|im_end|system|user|assistant|start_header_id|end_header_id|eot_id|endoftext)\|>|"
       r"\[/?inst\]|<</?sys>>|<start_of_turn>", "carries a chat-template marker that starts a new system or user turn"),
    _r("role", 1.0, "## system|## instruction|## assistant|## human|## user|## response|## 系统|## 指令|## 助手|## 用户",
       r"(?:^|\s)#{2,4}\s*(?:system|instructions?|assistant|human|user|response|系统提示|系统|指令|助手|用户)\s*:",
       "carries a chat-template marker that starts a new system or user turn"),
    _r("role", 0.9, "persona|identity|character|your name", r"\b(?:your|the) new (?:persona|identity|character|role|name)\b|"
       r"\bnew persona\b|\byour (?:persona|identity|name) is now\b", "gives the reader a new persona"),
    _r("role", 1.0, "treat", rf"\btreat (?:everything|this|the following|the text|what follows|all text)\b{G(25)}\bas (?:an?|the|your)?"
       r"\s*(?:system|developer|admin)\s*(?:message|prompt|instructions?|command)", "declares the text a system message"),
    _r("role", 0.5, "unrestricted|unfiltered|uncensored|no restrictions|no rules|no content policy|without any",
       r"\b(?:unrestricted|unfiltered|uncensored|jailbroken)\b|\b(?:no|without(?: any)?) (?:content policy|safety "
       r"(?:rules|guidelines|filters|training)|restrictions|filters|limitations|censorship)\b", "asks for a reader without its safeguards"),
    _r("role", 1.0, "你现在是|你现在的身份|从现在|新身份|假装|进入|模式|不受任何|没有任何",
       r"你现在是|从现在(?:开始|起),?\s*你(?:是|将|要|必须|只|扮演|就是)|你(?:现在)?的新身份是|你现在的身份(?:是|变成|改为)|假装你?是|"
       r"进入(?:开发者|越狱|上帝|无限制)模式|(?:开发者|越狱)模式|没有任何(?:限制|约束)的(?:AI|ai|助手|模型)",
       "gives the reader a new role"),
    _r("role", 1.0, "扮演", r"(?:你|请)(?:来|现在|将)?扮演|角色扮演\s*:", "asks the reader to play a role"),
    _r("role", 0.5, "扮演|不受|没有任何|不再有任何|遵守任何", r"扮演(?:一个|一名|一位|成)|不受任何(?:限制|约束|规则|道德)|"
       r"你(?:现在|已经|从此)?(?:没有|不再有)任何(?:限制|约束|规则|审查)|不(?:需要|用|必)(?:再)?遵守任何(?:规则|限制|约束)",
       "asks for a role without rules"),
    _r("role", 1.0, "当作|视为|作为|当成", r"(?:当作|视为|作为|当成)[^。\n]{0,4}(?:系统|开发者)(?:指令|消息|提示词?|命令)",
       "declares the text a system message"),
    _r("role", 0.6, "身份", r"以[^。\n]{1,12}的身份(?:回答|回复|说话|发言)", "gives the reader a persona"),
    _r("role", 0.8, "自己是|你是", r"(?:不要|别|不得)(?:说|承认|透露)(?:自己|你)是(?:AI|ai|人工智能|机器人|模型)",
       "tells the reader to deny being an AI"),
    # -- instructions addressed to an AI reading the text ---------------------------------
    _r("address", 1.0, "note|notice|message|instruction|instructions|attention|reminder|memo|hint|directive",
       rf"\b(?:note|notice|message|instructions?|attention|reminder|memo|hint|directive)\s+(?:to|for)\s+(?:(?:any|all|every|the)"
       rf"\s+{AI_ANY}|{AI})s?\b", "addresses a message to an AI"),
    _r("address", 1.0, "you are|you're", rf"\b(?:if|when|whenever|while)\s+you(?:'re| are)\s+(?:an?|the)?\s*{AI_ANY}\b",
       "addresses an AI reading the text"),
    _r("address", 0.6, "ai|assistant|assistants|bot|bots|chatbot|chatbots|llm|llms|model|models|gpt|chatgpt|claude|copilot|gemini", rf"(?:^|[\s>(\[-]|<!--)\s*{AI}s?\s*[,:]\s*\S",
       "calls an AI by name"),
    _r("address", 1.0, "dear|hey|hi|hello|attention", rf"\b(?:dear|hey|hi|hello|attention)\s+(?:all\s+|any\s+)?{AI}s?\s*[,:]",
       "calls an AI by name"),
    _r("address", 0.8, "ai|assistant|assistants|bot|bots|chatbot|chatbots|llm|llms|model|models|gpt|chatgpt|claude|copilot|gemini", rf"\b(?:the|this|an?|any|all|every)\s+"
       rf"{AI}s?\s+(?:(?:that|which|who)\s+)?(?:\S+\s+){{0,4}}?(?:must|should|shall|needs? to|has to|have to|is (?:required|"
       r"expected|instructed|supposed) to|are (?:required|expected|instructed|supposed) to|will now)\b",
       "tells an AI what it must do", also="must|should|shall|need|needs|has|have|required|expected|instructed|supposed|will"),
    _r("address", 0.8, _AI_KEYS, _READS, "addresses an AI that reads this text", also=_READS_KEYS),
    _r("address", 1.0, _AI_KEYS, rf"{_READS}{G(40)}{_MODAL}", "tells an AI that reads this text what to do",
       also=_READS_KEYS),
    _r("address", 0.7, "when you|whenever you|while you", r"\b(?:when|whenever|while|once|after|before) you (?:read|summari[sz]e|"
       r"process|review|analy[sz]e|index|translate|see|encounter|parse|rank|evaluate|answer questions about)\s+(?:this|these|"
       r"the following|the above|my|our)\b", "tells the reader what to do when it processes this text"),
    _r("address", 0.4, "when you|whenever you|while you|once you|if you",
       r"\b(?:when|whenever|while|once|if) you (?:write|produce|generate|give|create|draft|compose|make|prepare)\s+(?:a |an |the |"
       r"your )?(?:summary|summaries|answer|reply|response|overview|description|report|review|recap)\s+(?:of|about|for|on)\s+"
       r"(?:this|these|the following|the above|my|our)\b", "tells the reader what to do when it processes this text"),
    _r("address", 1.0, "whoever|anyone who|anybody who|any tool that|any system that|any program that",
       rf"\b(?:whoever|anyone who|anybody who|any (?:tool|system|program) that)\s+(?:answers|replies|responds|summari[sz]es|"
       rf"reads|processes|indexes)\b{G(50)}\b(?:should|must|has to|needs to|is to|shall)\s+(?:always\s+)?(?:recommend|promote|"
       r"endorse|advertise|praise|cite|describe|rate|claim|say|state|mention|include|add|tell)\b",
       "tells whatever reads the text what to say"),
    _r("address", 0.4, "agent|agents|model|models|bot|bots", rf"\b(?:the|this|an?|any|all|every)\s+{AI_ANY}s?\s+(?:(?:that|"
       r"which|who)\s+)?(?:\S+\s+){0,4}?(?:must|should|shall|needs? to|has to|have to|is (?:required|expected|instructed|"
       r"supposed) to|are (?:required|expected|instructed|supposed) to|will now)\b", "tells an agent or model what it must do",
       also="must|should|shall|need|needs|has|have|required|expected|instructed|supposed|will"),
    _r("address", 0.4, "读到|看到|阅读|处理|总结|整理", r"(?:读到|看到|阅读|处理|总结|整理)(?:这段话|这段文字|本文|这篇|此文|这里|本页|"
       r"这份|本文档|这一段)[^。\n]{0,6}?(?:时|后)?[^。\n]{0,3}(?:请|必须|务必|应该|应当|要)", "tells the reader what to do when it "
       "processes this text"),
    _r("address", 0.7, "as an|as the|as a", rf"\bas (?:an?|the) {AI}\b{G(20)}\byou (?:must|should|are required|will|need)",
       "tells an AI what it must do", also="you"),
    _r("address", 1.0, "给|致|写给|告", rf"(?:致|给|写给|告)(?:所有|任何|每一?个)?(?:正在)?(?:阅读|读取|处理)?(?:(?:本|这|此)(?:个|份|篇)?[^。\n:,]{{0,6}}?)?的?"
       rf"\s*{AI_ZH}+\s*(?:的)?(?:指令|说明|消息|提示|信)?\s*:", "addresses a message to an AI", also=AI_ZH_KEYS),
    _r("address", 1.0, "你是", rf"(?:如果|若|假如|当)你是(?:一个|一名)?[^。\n,]{{0,12}}{AI_ZH}", "addresses an AI reading the text"),
    _r("address", 0.8, AI_ZH_KEYS,
       rf"{AI_ZH}+(?:在)?(?:读到|看到|阅读|读取|处理|总结|解析|检索|抓取|浏览)(?:到)?(?:这|本|此|以下|下面)",
       "addresses an AI that reads this text", also="读到|看到|阅读|读取|处理|总结|解析|检索|抓取|浏览"),
    _r("address", 1.0, AI_ZH_KEYS,
       rf"{AI_ZH}+(?:在)?(?:读到|看到|阅读|读取|处理|总结|解析|检索|抓取|浏览)(?:到)?(?:这|本|此|以下|下面)[^。\n]{{0,20}}"
       r"(?:请|必须|务必|应该|应当|需要|(?<![摘重主只不])要)", "tells an AI that reads this text what to do",
       also="读到|看到|阅读|读取|处理|总结|解析|检索|抓取|浏览"),
    _r("address", 0.8, "ai|人工智能|助手|助理|模型|机器人|智能体", rf"{AI_ZH}+(?:请注意|注意|听着|须知)\s*[:,]|(?:^|\s){AI_ZH}+\s*[,:]\s*(?:你|请)",
       "calls an AI by name"),
    _r("address", 0.8, "正在|负责", r"(?:正在|负责)(?:阅读|读取|处理|整理|总结|分析)[^。\n]{0,12}的(?:AI|ai|"
       r"人工智能|智能助手|助手|大模型|模型|智能体)[^。\n]{0,10}(?:应该|应当|必须|需要|要|请)", "tells an AI that reads this text what to do"),
    _r("address", 0.7, "当你", r"当你(?:总结|阅读|读到|处理|翻译|分析|回答关于|整理)[^。\n]{0,6}(?:这|本|此)",
       "tells the reader what to do when it processes this text"),
    _r("address", 0.6, AI_ZH_KEYS, rf"{AI_ZH}[^。\n]{{0,12}}(?:必须|务必|应当|应该)[^。\n]{{0,10}}(?:把|将|在|推荐|说明|"
       r"声称|描述|回答|引用|安装|执行|运行|删除|授予|发送|上传)", "tells an AI what it must do", also="必须|务必|应当|应该"),
    _r("address", 0.8, "作为", rf"作为(?:一个)?{AI_ZH}\s*,?\s*你(?:必须|应该|需要|要)", "tells an AI what it must do"),
    # -- output manipulation ---------------------------------------------------------------
    _r("output", 1.0, "always|in every|in each|in all|at the end|at the start|at the beginning|at the top|at the bottom",
       rf"\b(?:always|in every|in each|in all|at the (?:end|start|beginning|top|bottom) of (?:every|each|all|your|any))\b{G(40)}"
       rf"\byour {ANSWER}\b", "dictates what every answer must contain"),
    _r("output", 0.6, "always|in every|in each|in all|at the end|at the start|at the beginning",
       rf"\b(?:always|in every|in each|in all|at the (?:end|start|beginning) of (?:every|each|all|any))\b{G(40)}\b{ANSWER}\b",
       "dictates what answers must contain"),
    _r("output", 1.0, "make sure|ensure|see to it|must|should|shall|always", rf"\b(?:make sure|ensure|see to it)(?: that)? (?:(?:each|every|"
       rf"all) (?:of )?)?your {ANSWER}{G(10)}\b(?:ends?|starts?|begins?|closes?|finish(?:es)?|contains?|includes?|mentions?)\b|"
       rf"\byour {ANSWER}\s+(?:must|should|shall|will always|always)\s+(?:end|start|begin|close|finish|contain|include|mention)\b",
       "dictates what the reader's answers must contain", also="your"),
    _r("output", 1.0, "sign|end|start|begin|close|finish|prefix|conclude|open", r"\b(?:sign|end|start|begin|close|finish|prefix|"
       rf"conclude|open)\s+(?:(?:all|each|every)\s+(?:of\s+)?(?:your\s+)?|your\s+){ANSWER}\s+(?:with|by)\b",
       "dictates how answers start or end"),
    _r("output", 0.6, "answer|answers|response|responses|reply|replies|output|outputs|summary|summaries|summarise|summarize|completion|completions|messages", rf"\b(?:at the (?:end|start|beginning|top|bottom) of|in|into|to|with)\s+(?:every|each|"
       rf"all(?: of)?|any)\s+(?:of\s+)?(?:your\s+|the\s+)?{ANSWER}\b", "makes a rule for every answer",
       also="every|each|all|any"),
    _r("output", 0.5, "link|url|signature|phrase|footer|sentence|http|https",
       rf"\b(?:append|add|insert|include|attach|mention|sign|put|write|say|state|recommend|promote|cite)\b{G(40)}"
       r"\b(?:link|url|signature|phrase|footer|sentence|https?://)", "tells the reader to insert text"),
    _r("output", 0.6, "website|homepage|web site|contact details|site|page|store|shop|channel",
       rf"\b(?:append|add|insert|include|attach|mention|put|recommend|promote|cite|link to)\b{G(20)}\b(?:their|our|its|his|her|"
       r"the vendor'?s|the sponsor'?s)\s+(?:\w+\s+)?(?:website|homepage|web site|contact details|site|page|store|shop|channel)\b",
       "tells the reader to promote someone's site"),
    _r("output", 0.5, "from now on|from this point on|from here on|henceforth|going forward|from today on",
       rf"\b(?:from (?:now|this point|here|today) on|henceforth|going forward)\b,?{G(30)}\b{ANSWER}\b",
       "makes a rule for every later answer"),
    _r("output", 0.5, "end with|finish with|close with|conclude with|end in", r"\b(?:end|finish|close|conclude)s? (?:with|in)\s+"
       r"(?:a |an |the )?(?:link|url|signature|footer|phrase|promo(?:tion)?|advert(?:isement)?|referral)\b",
       "tells the reader how to end what it writes"),
    _r("output", 0.8, "question|questions|message|messages|request|requests", r"\b(?:answer|reply to|respond to)\s+(?:every|each|all|any)\s+(?:question|"
       r"message|request)s?\s+with\b", "dictates how every answer must look"),
    _r("output", 0.6, "whatever|no matter|regardless|whenever", r"\b(?:whatever|no matter what|regardless of what|whenever) "
       r"(?:the user|someone|anyone|people|users?|a user)\s+(?:asks|says|wants|types|requests|writes|mentions)\b",
       "makes a rule for every later answer"),
    _r("output", 0.5, "tell them|tell the user|tell users|tell readers|tell people", r"\btell (?:them|the user|users|readers|people)"
       r" (?:to|that)\b", "tells the reader what to tell the user"),
    _r("output", 1.0, "answer|answers|response|responses|reply|replies|output|outputs|summary|summaries|summarise|summarize|completion|completions|messages", rf"\b(?:every|each|all)\s+(?:of\s+)?(?:your\s+|the\s+)?"
       rf"{ANSWER}\s+you\s+(?:give|write|produce|send|generate|make)\b", "dictates what every answer must contain",
       also="every|each|all;you"),
    _r("output", 1.0, "link|url|referral|affiliate|promo|promotion|advert|advertisement|signature|footer|pixel|snippet|banner|coupon|disclaimer|"
       "sentence|phrase",
       rf"\b(?:append|add|insert|include|attach|embed|put|place|paste|mention)\b{G(30)}\b(?:link|url|referral(?: code)?|affiliate "
       r"(?:link|code)|promo(?:tion)?(?: code)?|advert(?:isement)?|signature|footer|tracking pixel|snippet|banner|coupon|"
       rf"discount code|sentence|phrase|disclaimer)s?\b{G(60)}\b(?:to|in|into|at|on)\s+(?:the (?:top|end|"
       rf"start|bottom) of\s+)?(?:your|every|each|all|any)\s+(?:\S+\s+){{0,2}}?(?:{ANSWER}|files?|code|links?|urls?|pages?|html)\b",
       "tells the reader to insert text or links into what it writes"),
    _r("output", 1.0, "line|lines|tagline|slogan|note|text|words|credit",
       rf"\b(?:append|add|insert|include|attach|put|place|paste|write)\b{G(20)}\b(?:line|tagline|slogan|note|text|words|credit)s?\b"
       rf"{G(60)}\b(?:to|in|into|at|on|under)\s+(?:the (?:top|end|start|bottom) of\s+)?(?:your|every|each|all|any)\s+"
       rf"(?:\S+\s+){{0,2}}?{ANSWER}\b", "tells the reader to insert text into its answers"),
    _r("output", 0.8, "answer|answers|response|responses|reply|replies|output|outputs|summary|summaries|summarise|summarize|completion|completions|messages", rf"\b(?:every|each|all)\s+(?:of\s+)?(?:your\s+|the\s+)?"
       rf"{ANSWER}\b{G(30)}\b(?:must|should|has to|have to|needs? to|shall)\s+(?:\w+\s+)?(?:end|start|begin|include|contain|"
       r"mention|promote|recommend|link|carry|say|state)\b", "dictates what every answer must contain",
       also="every|each|all;must|should|has|have|needs|need|shall"),
    _r("output", 1.0, "respond|reply|answer|write|speak|talk", rf"\b(?:respond|reply|answer|write|speak|talk)\b{G(20)}\bin {LANGS}"
       rf"{G(40)}\b(?:from now on|regardless|whatever|no matter|always|even if|even when)\b|\b(?:from now on|always|only)\b{G(20)}"
       rf"\b(?:respond|reply|answer|write|speak)\b{G(10)}\bin {LANGS}\b|\b(?:respond|reply|answer|write|speak)\s+(?:exclusively|solely|"
       rf"only)\s+in {LANGS}\b", "changes the language of the reader's answers",
       also=LANG_KEYS),
    _r("output", 0.8, "recommend|promote|suggest|endorse|advertise|favour|favor", rf"\b(?:always|only|whenever|whatever|every time)\b{G(40)}\b"
       r"(?:recommend|promote|suggest|endorse|advertise|favou?r)\b|\b(?:recommend|promote|endorse)\b[^.!?\n]{0,40}\b(?:and no "
       r"other|not? (?:any )?other|instead of|over (?:all )?(?:other|competitors))\b", "tells the reader to promote something"),
    _r("output", 0.5, "describe|present|portray|label|rate|rank|characterise|characterize|mark|cite|treat", rf"\b(?:describe|present|portray|"
       rf"label|rate|rank|characteri[sz]e|cite|treat|mark)\b{G(30)}\b(?:as|above)\b{G(30)}\b(?:the best|best|excellent|"
       r"award-winning|trusted|secure|safe|verified|authoritative|official|stable|reliable|number one|#1|the only|superior|"
       r"leader|5 stars|five stars|10/10|all others)\b", "tells the reader how to judge the text",
       also="best|excellent|award-winning|trusted|secure|safe|verified|authoritative|official|stable|reliable|superior|"
       "leader|stars|10/10|#1|number one|the only|others"),
    _r("output", 0.5, "omit|leave out|mention|hide|suppress|drop|remove|delete", rf"\b(?:omit|leave out|do not mention|don't "
       rf"mention|never mention|hide|suppress|drop|remove|delete)\b{G(25)}\b(?:negative|complaints?|criticism|competitors?|"
       r"bad reviews|risks?|vulnerabilit(?:y|ies)|bugs|issues|warnings)\b", "tells the reader to leave out unfavourable facts"),
    _r("output", 0.5, "say|state|claim|assert|confirm|insist|tell", r"\b(?:say|state|claim|assert|confirm|insist|tell (?:the "
       r"user|them|users|readers))\s+(?:that\s+)?(?:it|this|the|our)\b[^.!?\n]{0,40}\b(?:no known|has no|have no|is "
       r"(?:safe|secure|the best|approved|verified|deprecated|stable)|never)\b", "tells the reader what to claim"),
    _r("output", 1.0, "回答|回复|答复|答案|输出|总结|摘要|回应", rf"(?:每|所有|任何|每一)(?:个|条|次|一次|一条|一个)?{ANSWER_ZH}的?"
       r"(?:末尾|结尾|开头|最后|前面|后面)", "dictates what every answer must contain", also="每|所有|任何;末尾|结尾|开头|最后|前面|后面"),
    _r("output", 0.6, "回答|回复|答复|答案|输出|总结|摘要|回应", rf"(?:每|所有|任何|每一)(?:个|条|次|一次|一条|一个)?{ANSWER_ZH}"
       r"(?:中|里|都)", "dictates what answers must contain", also="每|所有|任何"),
    _r("output", 0.7, "始终|总是|一律|务必|永远|每次都|必须", r"(?:始终|总是|一律|务必|永远|每次都)[^。\n]{0,12}(?:署名|签名|落款|附上|"
       r"加上|附加|添加|插入|推荐|提及|提到|宣传|带上)", "dictates what answers must contain"),
    _r("output", 1.0, "回答|回复|答复|答案|输出|总结|摘要|回应", rf"(?:在|向)?(?:你的)?{ANSWER_ZH}(?:中|里|末尾|结尾|开头|后面|前面|时)"
       r"[^。\n]{0,10}(?:附上|加上|添加|插入|署名|签名|推荐|附带|带上|写上|注明|提及|提到|宣传|不要提|别提)",
       "tells the reader to insert text into its answers", also="附上|加上|添加|插入|署名|签名|推荐|附带|带上|写上|注明|提及|提到|宣传|不要提|别提"),
    _r("output", 0.6, "回答用户|回复用户|答复用户", r"(?:回答|回复|答复)用户[^。\n]{0,10}?(?:时|的时候)[^。\n]{0,10}(?:附上|加上|添加|"
       r"插入|署名|签名|推荐|附带|带上|写上|注明|提及|提到|宣传)", "tells the reader to insert text into its answers"),
    _r("output", 0.8, "推荐|宣传|推广|介绍", r"(?:推荐|宣传|推广)[^。\n]{0,10}(?:别提|不要提|不提|而不是)|只(?:推荐|介绍|宣传)|"
       r"(?:问到|提到|谈到|涉及)[^。\n]{0,10}(?:就|都|一律)推荐|(?:无论|不管|不论)[^。\n]{0,12}(?:都|就)?(?:先|要|必须)?推荐",
       "tells the reader to promote something"),
    _r("output", 0.5, "有人问|有人提到|有人咨询|用户问", r"(?:凡是|每当|只要|如果|一旦)(?:有人|用户)(?:问起|问到|提到|咨询)[^。\n]{0,12}"
       r"(?:就说|就回答|都说|一律说|就告诉)", "makes a rule for every later answer"),
    _r("output", 0.6, "无论|不管|不论", r"(?:无论|不管|不论)用户(?:问|说|要求|输入|提出)(?:什么|了什么|任何)",
       "makes a rule for every later answer"),
    _r("output", 1.0, "都要|都必须|必须|务必", rf"(?:所有|每个|每条|每次|每一次|任何)的?{ANSWER_ZH}[^。\n]{{0,6}}(?:都要|都必须|必须|务必)"
       r"[^。\n]{0,6}?(?:提到|提及|加上|附上|推荐|署名|说明|写上|包含|用|以|改用|宣传)", "dictates what every answer must contain"),
    _r("output", 0.6, "英文|英语|日语|日文|法语|德语|韩语|俄语|中文|繁体", r"(?:用|改用|使用)(?:英文|英语|日语|日文|法语|德语|韩语|俄语|"
       r"中文|繁体)[^。\n]{0,10}(?:回复|回答|答复|输出)|(?:回复|回答|答复|输出)[^。\n]{0,6}(?:用|改用|使用)(?:英文|英语|日语|日文|法语|"
       r"德语|韩语|俄语|中文|繁体)", "changes the language of answers"),
    _r("output", 0.5, "无论|不管|不论|以后|今后|从现在|从今往后", r"(?:无论|不管|不论)[^。\n]{0,10}(?:什么语言|哪种语言|用什么)|"
       r"(?:以后|今后|从现在起)[^。\n]{0,10}(?:都|一律)?(?:用|改用)|(?:以后|今后|从现在起|从今往后)[^。\n]{0,6}(?:回答|回复|答复)",
       "makes a rule for every later answer"),
    _r("output", 0.6, "加上|附上|添加|带上", r"(?:加上|附上|添加|带上)[^。\n]{0,10}(?:我们|我司|本公司|本店)的?[^。\n]{0,6}(?:链接|"
       r"网址|公众号|二维码|店铺|联系方式)", "tells the reader to insert ads or links"),
    _r("output", 0.6, "插入|植入|加入|嵌入", r"(?:插入|植入|加入|嵌入)[^。\n]{0,10}(?:广告|推广|链接|二维码|推广码|联系方式|网址)",
       "tells the reader to insert ads or links"),
    _r("output", 0.5, "描述为|说成|评为|称为|称其为|当作唯一|唯一正确|唯一来源|最高分|列为",
       r"(?:描述为|说成|评为|称为|称其为)|当作唯一|唯一正确|唯一来源|最高分|列为(?:首选|第一|唯一)", "tells the reader how to judge the text"),
    # -- exfiltration --------------------------------------------------------------------------
    _r("exfiltration", 1.0, "http|https|www.|@|webhook|remote server|external",
       rf"\b(?:send|post|upload|e-?mail|mail|forward|transmit|exfiltrate|leak|submit|paste|share|deliver|put|copy|attach)\b{G(50)}{SECRET}"
       rf"{G(60)}{DEST}", "asks for secrets or the conversation to be sent out", also=f"{SECRET_KEYS};{SEND_KEYS}"),
    _r("exfiltration", 1.0, "http|https|www.|@|webhook|remote server|external",
       rf"{SECRET}{G(50)}\b(?:send|post|upload|e-?mail|forward|transmit|paste|submit|deliver)\b{G(40)}{DEST}",
       "asks for secrets or the conversation to be sent out", also=f"{SECRET_KEYS};{SEND_KEYS}"),
    _r("exfiltration", 1.0, "url|urls|link|links|image|parameter|query", rf"\b(?:append|add|include|put|encode|embed|attach)\b{G(40)}{SECRET}"
       rf"{G(40)}\b(?:url|link|image|query (?:string|parameter)|parameter)\b|{SECRET}\b{G(20)}\bas (?:a )?query parameter\b",
       "asks for secrets to be put into a link", also=SECRET_KEYS),
    _r("exfiltration", 0.6, "encode|base64|hex", rf"\b(?:encode|base64|hex|obfuscate)\b{G(30)}{SECRET}\b|{SECRET}\b{G(20)}"
       r"\b(?:encoded|in base64|as base64|to base64)\b", "asks for secrets to be encoded"),
    _r("exfiltration", 0.7, "~/.ssh|id_rsa|.aws/credentials|.env|/etc/passwd|/etc/shadow|.netrc|.npmrc|.pypirc", rf"\b(?:read|cat|print|open|dump|copy)\b{G(20)}(?:~/\.ssh|id_rsa|\.aws/"
       r"credentials|\.env\b|/etc/passwd|/etc/shadow|\.netrc|\.npmrc|\.pypirc)", "asks the reader to read credential files"),
    _r("exfiltration", 1.0, "output|print|repeat|include", r"\b(?:output|print|repeat|include|dump|write out)\b[^.!?\n]{0,20}"
       r"\b(?:the )?(?:full |entire |whole )?(?:conversation|chat) history\b", "asks for the conversation to be dumped"),
    _r("exfiltration", 1.0, "![", r"!\[[^\]\n]*\]\(\s*https?://[^)\s]*[?&][\w-]+=\s*[{$<\[]\s*(?:conversation|chat|history|"
       r"messages?|passwords?|tokens?|keys?|secrets?|prompt|summary|data|user|email|credentials?)",
       "carries an image link that would send the conversation or secrets out"),
    _r("exfiltration", 0.9, "![", r"!\[[^\]\n]*\]\(\s*https?://[^)\s]*[?&][\w-]+=\s*(?:\{|\$|<|\[|data\b|\))",
       "carries an image link that would send data out"),
    _r("exfiltration", 1.0, "发送|发到|发给|上传|传到|提交|转发|拼接|附在|附加|写入|同步", rf"{SECRET_ZH}[^。\n]{{0,24}}(?:发送|发到|发给|上传|"
       rf"传到|提交到|转发|拼接|附在|附加到?|写入|同步)[^。\n]{{0,20}}(?:{DEST}|服务器|网址|链接|邮箱|图片地址)", "asks for secrets or the conversation to be sent out",
       also=SECRET_ZH_KEYS),
    _r("exfiltration", 0.6, "编码|base64", rf"(?:编码|base64)[^。\n]{{0,20}}{SECRET_ZH}|{SECRET_ZH}[^。\n]{{0,20}}(?:编码|base64)",
       "asks for secrets to be encoded"),
    _r("exfiltration", 0.7, "读取|获取|打开", r"(?:读取|获取|打开|输出)[^。\n]{0,10}(?:~/\.ssh|id_rsa|\.aws/credentials|\.env|/etc/passwd|"
       r"密钥文件)", "asks the reader to read credential files"),
    # -- tool or action coercion ---------------------------------------------------------------
    _r("tool", 0.6, "rm -|curl|wget|mkfs|dd if|push -f|--force|drop table|drop database|format c:", DANGER, "carries a destructive or download-and-run command"),
    _r("tool", 1.0, "without|no need|no confirmation|no approval|no human|do not ask|don't ask|do not confirm|already approved|already agreed",
       rf"\b(?:run|execute|exec|install|delete|remove|erase|wipe|drop|transfer|wire|send|pay|move|push|deploy|download|grant|"
       rf"approve|call|invoke|use)\b{G(90)}\b(?:without (?:asking|confirmation|confirming|telling|permission|approval|review|waiting for (?:approval|confirmation|permission|review|the user)|"
       r"the user'?s? (?:consent|permission|approval|knowledge))|no (?:need|confirmation|approval|human review|review) "
       r"(?:is )?(?:needed|required)?|do not (?:ask|confirm|check with)|don't (?:ask|confirm)|the user has already "
       r"(?:approved|agreed|consented)|the user already (?:approved|agreed|consented|confirmed|authori[sz]ed)|has already (?:been )?"
       r"(?:approved|agreed))", "coerces the reader into an action without the user's consent"),
    _r("tool", 0.5, "no need|not necessary|unnecessary|don't bother|do not bother", r"\b(?:there is )?(?:no need|not necessary|"
       r"unnecessary|don't bother|do not bother) to (?:ask|confirm with|check with|consult|tell|inform|notify|wait for) the user\b",
       "tells the reader to act without asking the user"),
    _r("tool", 0.6, "delete|remove|erase|wipe|destroy|purge", r"(?:^|[.!?;:]\s*|\b(?:please|then|and|now)\s+)(?:delete|remove|"
       r"erase|wipe(?: out)?|destroy|purge)\s+(?:all|every|each|the entire|the whole|everything)\b[^.!?\n]{0,30}?\b(?:files?|"
       r"folders?|director(?:y|ies)|data|repositor(?:y|ies)|repos?|databases?|backups?|records|emails|branches|projects?)\b",
       "tells the reader to delete everything"),
    _r("tool", 0.5, "--force|force-push|force push|push -f|强制推送", r"\bpush\b[^.!?\n]{0,30}(?:--force\b|\s-f\b)|\bforce[- ]push\b|强制推送",
       "asks for a force push"),
    _r("tool", 0.5, "grant|give", rf"\b(?:grant|give)\b{G(25)}\b(?:sudo|root|admin(?:istrator)?|full|all) ?(?:access|rights|"
       r"privileges|permissions)?\b", "tells the reader to grant wide rights"),
    _r("tool", 0.5, "immediately|right away|right now|automatically|now", rf"(?:^|[.!?;:]\s*|\b(?:please|then|and)\s+)(?:run|execute|"
       rf"install|delete|remove|erase|wipe|transfer|wire|pay|push|deploy|download|grant)\b{G(80)}\b(?:immediately|right away|"
       r"right now|automatically|now)\b", "urges the reader into an action",
       also="run|execute|install|delete|remove|erase|wipe|transfer|wire|pay|push|deploy|download|grant"),
    _r("tool", 0.8, "tool|tools|function|plugin|api|shell|terminal|browser|command line", r"\b(?:use|call|invoke|trigger)\s+(?:your|the)\s+"
       rf"(?:\S+\s+){{0,2}}?(?:tool|function|plugin|api|shell|terminal|browser|command line)\b{G(40)}\b(?:run|execute|install|"
       r"delete|remove|transfer|move|send|download|write|modify|create|grant|pay)\b|\b(?:call|invoke|use) the \w+ tool\b|"
       rf"\b(?:with|using|via|through) (?:your|the) (?:\S+\s+){{0,2}}?(?:tool|shell|terminal|browser|plugin)\b{G(40)}\b(?:run|"
       r"execute|install|delete|remove|transfer|send|download)\b", "tells the reader to use its tools"),
    _r("tool", 0.6, ".sh|.ps1|.exe|.bat|.py", rf"\b(?:run|execute|install|launch)\b{G(30)}\b(?:from|at)\s+https?://\S+\.(?:sh|ps1|"
       r"exe|bat|py)\b", "tells the reader to run a program from the web", also="run|execute|install|launch;http|https"),
    _r("tool", 0.7, "$|usd|dollars|euro|euros|eur|btc|eth|bitcoin|crypto|funds|money", rf"\b(?:transfer|wire|send|pay|move)\b{G(30)}(?:\$\s?\d|\d+\s?(?:usd|eur|dollars|"
       rf"btc|eth|euros?)\b|\b(?:funds|money|bitcoin|crypto)\b){G(40)}\b(?:to|into)\b{G(20)}(?:account|wallet|address|iban|\d{{4}})",
       "asks the reader to move money", also="transfer|wire|send|pay|move"),
    _r("tool", 0.6, "step|task|job|action", r"\b(?:the|your) (?:next )?(?:step|task|job|action) (?:for|of) (?:the )?(?:agent|"
       r"assistant|ai|model|bot) is to\b", "gives an AI agent its next action", also="is to"),
    _r("tool", 1.0, "征求|经过|询问|确认|审核|审批|同意|人工|不要问|别问", r"(?:执行|运行|安装|删除|清空|转账|转入|推送|格式化|下载|授予|"
       r"覆盖)[^。\n]{0,40}(?:不需要|无需|不用|不必|别|不要)(?:再)?(?:用户|对方|人工|主人)?的?(?:征求|经过|询问|问|确认|审核|审批|同意|人工)",
       "coerces the reader into an action without the user's consent",
       also="执行|运行|安装|删除|清空|转账|转入|推送|格式化|下载|授予|覆盖;不需要|无需|不用|不必|别|不要"),
    _r("tool", 1.0, "征求|询问|经过|等待", r"(?:不用|不需要|无需|不必)(?:再)?(?:征求|询问|经过|等待)(?:用户|对方|人工|主人)?的?(?:意见|同意|确认|"
       r"批准|许可)?[^。\n]{0,12}?(?:直接|立即|马上)?(?:执行|运行|安装|删除|清空|转账|推送|强制推送|格式化|下载|授予|覆盖|发送)",
       "coerces the reader into an action without the user's consent", also="不用|不需要|无需|不必"),
    _r("tool", 0.5, "立即|马上|立刻|自动|直接", r"(?:立即|马上|立刻|自动|直接)(?:执行|运行|安装|删除|清空|转账|推送|下载)",
       "urges the reader into an action"),
    _r("tool", 0.6, "删除|清空|删掉|删光|清除", r"(?:删除|清空|删掉|删光|清除)[^。\n]{0,12}(?:所有|全部|一切|整个)[^。\n]{0,6}(?:文件|目录|"
       r"数据|仓库|数据库|备份|记录|邮件|分支|项目)|(?:所有|全部|整个)[^。\n]{0,8}(?:文件|目录|数据|仓库|数据库|备份)[^。\n]{0,4}"
       r"(?:删除|清空|删掉)", "tells the reader to delete everything"),
    _r("tool", 0.8, "工具|终端|命令行|插件|接口|shell", r"(?:调用|使用|用|通过)(?:你的)?[^。\n]{0,6}(?:工具|终端|命令行|插件|接口|shell)"
       r"[^。\n]{0,10}(?:安装|删除|执行|运行|转账|转入|下载|发送|支付|付款)", "tells the reader to use its tools",
       also="调用|使用|用|通过;安装|删除|执行|运行|转账|转入|下载|发送|支付|付款"),
    _r("tool", 0.6, "转账|转入|汇款|打款|支付", r"(?:转账|转入|汇款|打款|支付)[^。\n]{0,20}(?:\d+\s*(?:元|块|美元|usd|万)|账户|钱包)",
       "asks the reader to move money"),
    _r("tool", 0.6, "下一步", r"(?:智能体|助手|AI|ai|模型)的下一步(?:操作)?是", "gives an AI agent its next action"),
    # -- secrecy -------------------------------------------------------------------------------
    _r("secrecy", 1.0, "the user|the human|the person", r"\b(?:do not|don't|never|must not|mustn't|should not|shouldn't)\s+"
       r"(?:tell|inform|mention (?:this |it |that )?to|reveal (?:this |these |it |that )?to|disclose (?:this |these |it )?to|"
       r"notify|alert|let)\s+the (?:user|human|person)\b|\bwithout (?:telling|informing|alerting|notifying) (?:the user|anyone|anybody)\b|"
       r"\bwithout the user (?:knowing|noticing|seeing|realising|realizing)\b", "asks that something be kept from the user"),
    _r("secrecy", 1.0, "secret|confidential|hidden|private|hide", r"\bkeep (?:these|this|the|all|it)\s+(?:\w+\s+){0,4}?(?:secret|"
       r"confidential|hidden|private)\b[^.!?\n]{0,20}\bfrom (?:the user|the human|users)\b|\bkeep (?:these|this|the|all) "
       r"(?:instructions?|prompt|directives?|part of the prompt|message|note|rules?|step|change)s?\s+(?:\w+\s+){0,3}?(?:secret|"
       r"confidential|hidden|private)\b|\bhide (?:this|these|it|that)\b[^.!?\n]{0,20}\bfrom the user\b",
       "asks that instructions be kept secret"),
    _r("secrecy", 0.9, "reveal|disclose|mention|share|expose|repeat|admit", r"\b(?:do not|don't|never|must not)\s+(?:reveal|disclose|"
       r"mention|share|expose|repeat|admit)\s+(?:these|this|the|your|any)\s+(?:\w+\s+)?(?:instructions?|prompt|directives?|"
       r"message|rules|step|change|link)s?\b", "asks that instructions be kept secret"),
    _r("secrecy", 0.6, "user|human|person", r"\b(?:do not|don't|never|must not)\s+(?:reveal|disclose|mention|share|repeat|explain)\s+"
       r"(?:these|this|the|your|any)\s+(?:\w+\s+)?(?:instructions?|prompt|directives?|message|note|rules|request)s?\s+to\s+"
       r"(?:the |your )?(?:user|human|person)s?\b", "asks that instructions be kept from the user"),
    _r("secrecy", 0.6, "succeeded|went well|worked|is fine|was successful|were successful|all is well|nothing happened",
       r"\b(?:then|and|afterwards)\s+(?:report|tell the user|tell them|say|claim|reply)\s+that\s+(?:it|everything|all|the \w+)\s+(?:\w+\s+)?"
       r"(?:succeeded|went well|worked|is fine|was successful|were successful)\b", "tells the reader how to cover up"),
    _r("secrecy", 1.0, "the user|the human", r"\bthe (?:user|human) (?:must not|mustn't|must never|should never|is never to) "
       r"(?:find out|learn about|notice|realise|realize|discover|know about|be told|suspect)\b",
       "asks that something be kept from the user"),
    _r("secrecy", 0.8, "user|users", r"\b(?:the )?users? (?:must not|mustn't|should not|shouldn't|cannot|can't|may not|must never|"
       r"should never) (?:find out|learn about|notice|realise|realize|discover|know about|be told|suspect)\b",
       "asks that something be kept from the user"),
    _r("secrecy", 0.6, "to yourself", r"\bkeep (?:this|these|it|that)(?: \w+)? to yourself\b",
       "asks the reader to keep something to itself"),
    _r("secrecy", 0.4, "change the subject|deflect|avoid the question|dodge the question|steer the conversation",
       r"\b(?:change the subject|deflect|avoid the question|dodge the question|steer the conversation away)\b",
       "tells the reader to evade the user's question"),
    _r("secrecy", 0.6, "nothing unusual|nothing happened|nothing changed|nothing was|everything is fine|everything is normal|"
       "everything is ok", rf"\b(?:tell|say to|assure|reassure|inform|answer|reply to) (?:them|the user|him|her|users)\b{G(10)}\b"
       r"(?:nothing (?:unusual|happened|changed|was (?:done|changed|sent|deleted))|everything is (?:fine|normal|ok))",
       "tells the reader to reassure the user falsely"),
    _r("secrecy", 0.8, "as if nothing|if the user asks|if asked", r"\b(?:act|behave|pretend|carry on) as if nothing\b|\bif the user "
       r"(?:asks|questions|wonders)\b[^.!?\n]{0,40}\b(?:say|tell|claim|answer|reply|change the subject)\b",
       "tells the reader how to cover up"),
    _r("secrecy", 0.8, "secretly|quietly|silently|covertly|discreetly|invisibly", r"\b(?:secretly|quietly|silently|covertly|"
       r"discreetly|invisibly)\s+(?:add|insert|include|send|append|change|remove|delete|recommend|replace|mention|modify|"
       r"upload|forward|run|execute|install)\b", "asks for something to be done behind the user's back"),
    _r("secrecy", 1.0, "用户", r"(?:不要|别|切勿|不得|不能|不许|千万别|千万不要|绝对不要)(?:告诉|告知|透露给|让|通知|提醒)用户|"
       r"瞒着用户|不(?:要)?让用户(?:知道|发现|察觉)|对用户(?:保密|隐瞒)", "asks that something be kept from the user",
       also="不要|别|切勿|不得|不能|不许|瞒着|不让|对用户"),
    _r("secrecy", 0.9, "保密|透露|别说|提及|说出|承认", r"(?:这些|本|这条|此|这一?步)(?:指令|要求|内容|说明|提示|步骤)?[^。\n]{0,10}"
       r"(?:保密|不要透露|不能透露|别说)|(?:不要|别|切勿)(?:提及|透露|说出|承认)[^。\n]{0,6}(?:这些|这条|本)(?:指令|要求|提示|内容)",
       "asks that instructions be kept secret"),
    _r("secrecy", 0.8, "悄悄|偷偷|暗中|秘密|默默", r"(?:悄悄|偷偷|暗中|秘密地?|默默)地?(?:加|插入|添加|修改|删除|发送|上传|执行|推荐)",
       "asks for something to be done behind the user's back"),
    _r("secrecy", 0.6, "一切正常|没有问题|已经成功|操作成功|都正常|顺利完成", r"(?:告诉|告知|回复|通知)用户[^。\n]{0,4}(?:一切正常|"
       r"没有问题|已经成功|操作成功|都正常|顺利完成)", "tells the reader how to cover up"),
    _r("secrecy", 0.8, "如果用户问|用户问起", r"(?:如果|若|要是)?用户问(?:起|到)?[^。\n]{0,20}(?:就说|就回答|你就说|就告诉)",
       "tells the reader how to cover up"),
    # -- structural signals: what no phrasing hides -------------------------------------------
    # a link or image whose address carries workspace data or a placeholder to be filled with data
    _r("exfiltration", 1.0, "](", rf"!?\[[^\]\n]*\]\(\s*(?:https?:)?//[^)\s]*[?&#][\w.-]+={DATA_IN_QUERY}",
       "carries a link or image whose address would send workspace data out"),
    _r("exfiltration", 1.0, "<img|<a ", rf"<(?:img|a)\b[^>\n]*\b(?:src|href)\s*=\s*[\"']?(?:https?:)?//[^\"'\s>]*[?&#][\w.-]+="
       rf"{DATA_IN_QUERY}", "carries a link or image whose address would send workspace data out"),
    _r("exfiltration", 1.0, "![", r"!\[[^\]\n]*\]\(\s*(?:https?:)?//[^)\s]*[?&#][\w.-]+=(?:data|secrets?|tokens?|passwords?|"
       r"credentials|conversation|chat|memory|memories|facts|payload|prompt)(?=[)&#\s])",
       "carries an image whose address would send data out"),
    # an action that sends workspace memory to an address outside
    _r("exfiltration", 1.0, "http|https|www.|@|webhook",
       rf"\b{SEND}\b{G(60)}(?:{WORKSPACE}|\b(?:the |your |my |our |all )?(?:stored |saved )?(?:facts|preferences|memory|"
       rf"memories|workspace|knowledge base)(?: files?| folders?| notes| entries| contents)?\b|\bcontents? of\b|\bwhat you "
       rf"(?:remember|know about)\b){G(60)}(?:{URL}|{EMAIL}|\bwebhooks?\b)|{WORKSPACE}{G(60)}\b(?:and|then)\s+{SEND}\s+(?:it|them|its contents?|"
       rf"the contents?|everything)?\s*(?:to|into|at)\s+(?:{URL}|{EMAIL}|\bwebhooks?\b)", "asks for the workspace's memory to be sent out",
       also=SEND_KEYS),
    _r("exfiltration", 0.6, "http|https|www.|@", rf"(?:^|(?<=[.!?;:]\s)|(?<=\n))(?:(?:then|and then|next|also|afterwards|"
       rf"finally|now)\s*,?\s+)?{SEND}\b{G(60)}(?:{URL}|{EMAIL})", "tells the reader to send something to an address outside",
       also=SEND_KEYS),
    _r("exfiltration", 1.0, "记忆|事实|偏好|工作区|知识库|memory/", rf"(?:记忆|事实文件|偏好文件|工作区|知识库|{WORKSPACE})[^。\n]{{0,24}}"
       rf"{SEND_ZH}[^。\n]{{0,20}}(?:{URL}|{EMAIL}|服务器|邮箱)|{SEND_ZH}[^。\n]{{0,12}}(?:记忆|事实文件|偏好文件|工作区|知识库|"
       rf"{WORKSPACE})[^。\n]{{0,24}}(?:{URL}|{EMAIL}|服务器|邮箱)", "asks for the workspace's memory to be sent out"),
    _r("override", 0.6, "above|preceding|foregoing", r"\b(?:ignore|disregard|forget|skip|drop)\s+(?:all\s+(?:of\s+)?|everything\s+)?"
       r"(?:the\s+)?(?:above|preceding|foregoing)(?=\s*(?:and\b|then\b|[,;:.!]|$))", "tells the reader to drop what came before"),
    _r("override", 0.6, "以上|上面|上述|前面", r"(?:忽略|无视|忘记|忘掉|不要理会)(?:掉)?(?:以上|上面|上述|前面)(?:的)?(?:内容|所有|全部|一切)?"
       r"(?=[，,。；;：:！!]|并|然后|$)", "tells the reader to drop what came before"),
    # a line that imitates a turn of the conversation: the assistant's (agreeing, to carry the model along) or the system's
    _r("role", 1.0, "assistant|ai|chatgpt|gpt|claude|gemini|copilot|bot|model", rf"{TURN}(?-i:(?:AI )?Assistant|ASSISTANT|AI|"
       r"ChatGPT|GPT(?:-?\d+o?)?|Claude|Gemini|Copilot|Bot|Model)\s*:\s*(?:sure|certainly|of course|absolutely|okay|ok|"
       r"understood|yes|alright|got it|no problem|as requested|will do|right away|here (?:is|are))\b[^\n]{0,80}?\b(?:secrets?|"
       r"passwords?|keys|api keys?|credentials|tokens|system prompt|confidential|ignor(?:e|ing)|disregard(?:ing)?|"
       r"no (?:restrictions|rules|limits|filters)|without (?:restrictions|rules|limits|filters|asking)|unrestricted|"
       r"send(?:ing)?|forward(?:ing)?|upload(?:ing)?|stored|admin)\b",
       "imitates the assistant's turn of the conversation, agreeing to a request"),
    _r("role", 1.0, "system|developer|sys", rf"{TURN}(?-i:System|SYSTEM|System message|System prompt|SYS|Developer|DEVELOPER)"
       r"\s*:\s*(?:you\b|you're\b|your\b|from now\b|ignore\b|disregard\b|forget\b|the (?:assistant|ai|model)\b|assistants?\b|"
       r"override\b|new (?:instructions|rules|prompt)\b)", "imitates a system turn of the conversation"),
    _r("role", 0.4, "system", rf"{TURN}(?-i:System|SYSTEM)\s*:", "imitates a system turn of the conversation"),
    _r("role", 1.0, "助手|ai|机器人|模型", rf"{TURN}(?:ai|人工智能)?(?:助手|助理|机器人|模型)\s*[:：]\s*(?:好的|当然|没问题|明白|以下是|这是|"
       r"收到|遵命|可以)[^。\n]{0,40}(?:密码|密钥|令牌|凭据|系统提示|机密|秘密|忽略|不再遵守|不受限制|没有限制|发送|上传|管理员)",
       "imitates the assistant's turn of the conversation, agreeing to a request"),
    _r("role", 1.0, "系统", rf"{TURN}系统(?:消息|提示词?|指令)?\s*[:：]\s*(?:你|从现在|从今|忽略|无视|助手|AI|ai|模型)",
       "imitates a system turn of the conversation"),
    _r("role", 0.5, "助手|系统", rf"{TURN}(?:ai)?(?:助手|系统)\s*[:：]", "imitates a turn of the conversation"),
    # an instruction addressed to a tool by its name
    _r("tool", 1.0, "mcp__|functions.|save_session|write_section|log_tool_call|board_add|board_update|board_feedback|"
       "board_applied|get_context|remember|forget|call read|call search|call status|invoke read|invoke search|invoke status|"
       "call the read|call the search|call the status|call the kbsync|invoke the", r"\b(?:call|invoke|use|run|trigger|execute|then)\s+(?:the\s+)?(?:kbsync\s+)?"
       rf"(?:mcp\s+)?`?(?:{TOOL_NAMES}|remember|forget)`?(?:\s+(?:tool|function)\b|\s*\(|\s+with\b|\s+to\b)|"
       r"\b(?:call|invoke)\s+(?:the\s+)?(?:kbsync\s+)?`?(?:read|search|status)`?\s*(?:tool\b|function\b|\(|with\b|on\b)|"
       r"(?:\bmcp__[a-z0-9_-]+|\bfunctions\.[a-z_]\w*)\s*\(", "addresses the reader's tools by name"),
    _r("tool", 0.6, "save_session|write_section|log_tool_call|board_add|board_update|board_feedback|board_applied|get_context",
       rf"{TOOL_NAMES}\s*\(\s*[\w\"'{{\[]", "calls one of the reader's tools with arguments"),
    _r("tool", 1.0, "调用|使用|执行", rf"(?:调用|使用|执行)\s*`?(?:{TOOL_NAMES}|remember|forget)`?", "addresses the reader's tools by name"),
)