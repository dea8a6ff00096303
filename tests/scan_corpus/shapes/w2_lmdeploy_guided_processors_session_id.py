from typing import Any


class GuidedDecodingManager:
    def __init__(self, compiler, vocab_size: int):
        self.compiler = compiler
        self.vocab_size = vocab_size
        self.processors: dict = {}

    def get_processors(self, session_ctx, response_formats):
        processors = {}
        for i, _format in enumerate(response_formats):
            if isinstance(_format, dict) and _format.get('type', 'text') != 'text':
                session_id = session_ctx[i]['session_id']
                seq_id = session_ctx[i]['seq_id']
                processors[i] = self.get_processor(session_id, seq_id, _format, _format['type'])
        return processors

    def get_processor(self, session_id: int, seq_id: int, schema: Any, type: str):
        if session_id in self.processors:
            session_dict = self.processors[session_id]
            if seq_id in session_dict:
                return session_dict[seq_id]
        compiled = self.compiler.compile(schema, type)
        processor = object() if compiled is None else compiled
        self.processors.setdefault(session_id, {})[seq_id] = processor  # corpus: sink
        return processor

    def remove_processor(self, session_id: int):
        if session_id in self.processors:
            del self.processors[session_id]

    def clear(self) -> None:
        self.processors.clear()
