import pytest

from .model_server import running


@pytest.fixture
def model_server():
    with running() as server:
        yield server


def make_anthropic(server):
    import anthropic

    from noetic.llm.anthropic import AnthropicProvider

    client = anthropic.AsyncAnthropic(
        api_key="test-key", base_url=server.url, max_retries=0, timeout=5
    )
    return AnthropicProvider("claude-test", client=client)


def make_openai(server):
    import openai

    from noetic.llm.openai_compat import OpenAICompatibleProvider

    client = openai.AsyncOpenAI(
        api_key="test-key", base_url=f"{server.url}/v1", max_retries=0, timeout=5
    )
    return OpenAICompatibleProvider("gpt-test", name="openai", client=client)


@pytest.fixture
def anthropic_provider(model_server):
    return make_anthropic(model_server)


@pytest.fixture
def openai_provider(model_server):
    return make_openai(model_server)


@pytest.fixture(params=["anthropic", "openai"])
def provider(request, anthropic_provider, openai_provider):
    return anthropic_provider if request.param == "anthropic" else openai_provider


@pytest.fixture(autouse=True)
def _fresh_schema_memory():
    """Each test starts with no endpoint remembered as refusing native structured output."""
    from noetic.llm.anthropic import NO_NATIVE_SCHEMA as anthropic_memory
    from noetic.llm.openai_compat import NO_NATIVE_SCHEMA as openai_memory
    from noetic.llm.openai_compat import NO_NATIVE_TOOLS

    for memory in (anthropic_memory, openai_memory, NO_NATIVE_TOOLS):
        memory.forget()
    yield
    for memory in (anthropic_memory, openai_memory, NO_NATIVE_TOOLS):
        memory.forget()
