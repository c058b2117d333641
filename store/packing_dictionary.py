"""The preset zlib dictionaries packed payloads are compressed against (store/packing.py).

A dictionary is the text of the shapes every payload repeats: the request skeleton
copydesk sends to the Messages API (its parts already replaced by references), the
API's reply with a tool call, and the gates' evidence, with invented values. zlib
then stores in each row only what is its own (RFC 1950 §2.2: FDICT and DICTID, the
dictionary's Adler-32, in the stream's header; https://docs.python.org/3/library/zlib.html#zlib.compressobj,
`zdict`: "the most common subsequences ... at the end of the dictionary").

NEVER CHANGE A DICTIONARY: every row packed with it needs these exact bytes to be
read (tests/test_packing_dictionary.py pins them). To pack with a better one, add
DICTIONARY_2 and list both in store/packing.py `DICTIONARIES`.
"""

from __future__ import annotations

DICTIONARY_1 = "".join(
    (
        # Gate evidence (guards/): source and draft gates, then the model checks.
        '{"url":"https://news.example.org/2026/11/ferry","host":"news.example.org"}',
        '{"words":412,"min_words":150}',
        '[{"quote":"We will reopen the pier","found":true,"speaker":"Maren Oake",'
        '"draft_span":[12,36],"source_span":[240,264]}]',
        '[{"name":"Maren Oake","found":true,"draft_span":[40,50],"missing":[],'
        '"source_span":[310,320]},{"name":"Harrowby","found":true,"draft_span":[3,11],'
        '"missing":[],"source_span":[18,26]}]',
        '[{"date":"Thursday","kind":"weekday","value":"thu","found":true,'
        '"draft_span":[71,79],"source_span":[96,104]}]',
        '[{"number":"4,500","value":"4500","found":true,"draft_span":[88,93],'
        '"source_span":[402,407],"source_text":"4,500","unit":"pounds"}]',
        '{"sentences":[{"sentence":"The Harrowby council approved the pier plan on Thursday.",'
        '"errors":[],"wrong_fact":false,"material":true,"kind":"number",'
        '"rewrite":"The Harrowby council approved the pier plan on Thursday.",'
        '"reader_draft":"The Harrowby council approved the pier plan on Thursday.",'
        '"reader_rewrite":"The Harrowby council approved the pier plan on Thursday.",'
        '"passage":"The council approved the plan on Thursday.","draft_span":[0,57],'
        '"source_span":[120,162],"outcome":"faithful","why":null}],"not_judged":[]}',
        '[{"claim":"The council approved the pier plan.",'
        '"passage":"The council approved the plan on Thursday.","model_says_supports":true,'
        '"source_span":[120,162],"draft_sentences":[0],"outcome":"supported","rule":null,'
        '"detail":null,"supported":true}]',
        # The Messages API's reply with a tool call (docs: /en/api/messages).
        '{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant",'
        '"model":"claude-haiku-4-5-20251001","content":[{"type":"text","text":"'
        'I will record the checks."},{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9",'
        '"name":"record_checks","input":{"claims":[{"claim":"The council approved the '
        'pier plan.","passage":"The council approved the plan on Thursday.","supports":true}],'
        '"sentences":[{"sentence":"The Harrowby council approved the pier plan on Thursday.",'
        '"errors":[],"wrong_fact":false,"rewrite":"The Harrowby council approved the pier '
        'plan on Thursday.","reader_draft":"The Harrowby council approved the pier plan on '
        'Thursday.","reader_rewrite":"The Harrowby council approved the pier plan on '
        'Thursday.","material":true,"passage":"The council approved the plan on Thursday."}]}}],'
        '"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":2095,'
        '"output_tokens":503,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}',
        '{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant",'
        '"model":"claude-haiku-4-5-20251001","content":[{"type":"tool_use",'
        '"id":"toolu_01A09q90qw90lq917835lq9","name":"write_summary","input":{"headline":'
        '"Harrowby council approves the pier plan","summary":"The Harrowby council approved '
        'the pier plan on Thursday, its leader, Maren Oake, said."}}],"stop_reason":"tool_use",'
        '"stop_sequence":null,"usage":{"input_tokens":1850,"output_tokens":140,'
        '"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}',
        # The request as the ledger keeps it (store/ledger.py: parts by reference).
        '{"model":"claude-haiku-4-5","max_tokens":8192,"tools":{"$part":"sha256:"},'
        '"tool_choice":{"type":"tool","name":"record_checks","disable_parallel_tool_use":true},'
        '"system":{"$part":"sha256:"},"messages":[{"role":"user","content":[{"type":"text",'
        '"text":{"$part":"sha256:"}},{"type":"text","text":{"$part":"sha256:"}},'
        '{"type":"text","text":{"$part":"sha256:"}}]}],"temperature":0.0}',
        '{"model":"claude-haiku-4-5","max_tokens":4096,"tools":{"$part":"sha256:"},'
        '"tool_choice":{"type":"any","disable_parallel_tool_use":true},'
        '"system":{"$part":"sha256:"},"messages":[{"role":"user","content":[{"type":"text",'
        '"text":{"$part":"sha256:"}},{"type":"text","text":{"$part":"sha256:"}}]}],'
        '"temperature":0.0}',
    )
).encode("utf-8")
