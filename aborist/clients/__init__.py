"""Answering clients: the :class:`~aborist.clients.base.ChatClient` interface, the
OpenAI-compatible and Anthropic HTTP clients, the offline extractive answerer, and the
choice between them from settings (:mod:`.select`)."""
