import pytest

from .model_server import running


@pytest.fixture
def model_server():
    with running() as server:
        yield server


@pytest.fixture
def anthropic_provider(model_server):
    import anthropic

    from noetic.llm.anthropic import AnthropicProvider

    client = anthropic.AsyncAnthropic(
        api_key="test-key", base_url=model_server.url, max_retries=0, timeout=5
    )
    return AnthropicProvider("claude-test", client=client)


@pytest.fixture
def openai_provider(model_server):
    import openai

    from noetic.llm.openai_compat import OpenAICompatibleProvider

    client = openai.AsyncOpenAI(
        api_key="test-key", base_url=f"{model_server.url}/v1", max_retries=0, timeout=5
    )
    return OpenAICompatibleProvider("gpt-test", name="openai", client=client)


@pytest.fixture(params=["anthropic", "openai"])
def provider(request, anthropic_provider, openai_provider):
    return anthropic_provider if request.param == "anthropic" else openai_provider
