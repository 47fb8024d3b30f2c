"""An A2A 1.0 peer agent built with the official Python SDK (PyPI a2a-sdk 1.3.0).

usage: .venv/bin/python a2a_agent.py

Serves on 127.0.0.1 (a free port) the JSON-RPC binding at /a2a/jsonrpc (also
/a2a/jsonrpc/) and the HTTP+JSON (REST) binding under /a2a/rest, with the
agent card at /.well-known/agent-card.json listing both. Prints exactly one
line, `a2a agent listening at http://127.0.0.1:PORT`, once it accepts
connections, then serves until killed.

Behaviour, keyed by the first text part of the user message:
  "stream..."  a task: WORKING, then three artifact updates of one artifact
               ("chunk 1", "chunk 2", "chunk 3"; append=false then true,
               lastChunk on the third), then COMPLETED.
  "slow..."    a task: WORKING, then COMPLETED after about 10 s unless it is
               cancelled first (for cancel / subscribe tests).
  anything else: a task that completes at once with one artifact whose text
               part is `echo: <the text>`.
Tasks and push configs are kept in memory; push notifications are delivered
(the SDK's BasePushNotificationSender) to any URL a client registers.
"""

import asyncio
import socket
import sys

import httpx
import uvicorn
from starlette.applications import Starlette

from a2a.helpers import get_text_parts, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)

JSONRPC_PATH = '/a2a/jsonrpc'
REST_PATH = '/a2a/rest'


class InteropExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        texts = get_text_parts(message.parts) if message else []
        text = texts[0] if texts else ''
        task_id = context.task_id
        context_id = context.context_id

        # The SDK requires a Task to be enqueued before any status update.
        if context.current_task is None:
            task = Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
            )
            if message:
                task.history.append(message)
            await event_queue.enqueue_event(task)

        updater = TaskUpdater(event_queue, task_id, context_id)
        if text.startswith('stream'):
            await updater.start_work(
                updater.new_agent_message([new_text_part('streaming 3 chunks')])
            )
            artifact_id = f'{task_id}-stream'
            for i in (1, 2, 3):
                await asyncio.sleep(0.05)
                await updater.add_artifact(
                    [new_text_part(f'chunk {i}')],
                    artifact_id=artifact_id,
                    name='stream',
                    append=i > 1,
                    last_chunk=i == 3,
                )
            await updater.complete()
        elif text.startswith('slow'):
            await updater.start_work(
                updater.new_agent_message([new_text_part('working slowly')])
            )
            for _ in range(100):
                await asyncio.sleep(0.1)
            await updater.add_artifact([new_text_part('slow done')], name='result')
            await updater.complete()
        else:
            await updater.add_artifact([new_text_part(f'echo: {text}')], name='echo')
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', 0))
    sock.listen(128)
    return sock


def build_app(base: str) -> Starlette:
    card = AgentCard(
        name='a2a-sdk interop agent',
        description='Echo and streaming agent built with a2a-sdk 1.3.0',
        version='1.0.0',
        supported_interfaces=[
            AgentInterface(
                url=base + JSONRPC_PATH, protocol_binding='JSONRPC', protocol_version='1.0'
            ),
            AgentInterface(
                url=base + REST_PATH, protocol_binding='HTTP+JSON', protocol_version='1.0'
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=['text/plain', 'application/json'],
        default_output_modes=['text/plain', 'application/json'],
        skills=[
            AgentSkill(
                id='echo',
                name='Echo',
                description='Answers `echo: <text>`',
                tags=['echo'],
                examples=['hello'],
            ),
            AgentSkill(
                id='stream',
                name='Stream',
                description='A message starting with "stream" streams three artifact chunks',
                tags=['stream'],
                examples=['stream please'],
            ),
        ],
    )
    push_store = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        push_sender=BasePushNotificationSender(
            httpx.AsyncClient(timeout=5), push_store
        ),
    )
    # Order matters: create_rest_routes ends with a catch-all Mount('/{tenant}'),
    # so the card and the JSON-RPC routes go first.
    routes = []
    routes += create_agent_card_routes(card)
    routes += create_jsonrpc_routes(handler, JSONRPC_PATH, enable_v0_3_compat=True)
    routes += create_jsonrpc_routes(handler, JSONRPC_PATH + '/', enable_v0_3_compat=True)
    routes += create_rest_routes(handler, path_prefix=REST_PATH)
    return Starlette(routes=routes)


async def main() -> None:
    sock = free_socket()
    port = sock.getsockname()[1]
    base = f'http://127.0.0.1:{port}'
    config = uvicorn.Config(build_app(base), log_level='warning', lifespan='off')
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    for _ in range(1000):
        if server.started or serving.done():
            break
        await asyncio.sleep(0.01)
    if not server.started:
        if serving.done():
            serving.result()
        raise SystemExit('a2a agent: uvicorn did not start')
    sys.stdout.write(f'a2a agent listening at {base}\n')
    sys.stdout.flush()
    await serving


if __name__ == '__main__':
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
