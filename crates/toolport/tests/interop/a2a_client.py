"""Drive a Toolport A2A server with the official Python SDK client (PyPI a2a-sdk 1.3.0).

usage: .venv/bin/python a2a_client.py BASE_URL [--binding jsonrpc|rest]

Resolves the agent card at BASE_URL/.well-known/agent-card.json, builds clients
with the SDK's ClientFactory (A2A-Version 1.0) for the chosen binding, and runs
the checks below against the demo MCP tools served as A2A skills. Each check
records what it saw under its own key; a check that fails records
{"error": "..."} (with whatever it had seen so far) and the others still run.
The last line of stdout is ONE JSON object with every check; the exit code is 0
only if no check failed. Tracebacks go to stderr. Every wait is bounded.

States are recorded without the TASK_STATE_ prefix ("COMPLETED", "WORKING"...).
"""

import argparse
import asyncio
import json
import sys
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from google.protobuf import json_format

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError

CHECK_TIMEOUT = 15.0
HTTP_TIMEOUT = 15.0
VERSION_HEADERS = {'A2A-Version': '1.0'}


# ---------------------------------------------------------------- helpers


def short_state(state: int) -> str:
    return TaskState.Name(state).removeprefix('TASK_STATE_')


def ints(value):
    """google.protobuf.Value keeps every number as a double: 3 -> 3.0. Undo that."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [ints(v) for v in value]
    if isinstance(value, dict):
        return {k: ints(v) for k, v in value.items()}
    return value


def part_json(part: Part):
    return ints(json_format.MessageToDict(part))


def data_part(obj) -> Part:
    p = Part()
    json_format.ParseDict(obj, p.data)
    return p


def user_message(payload, task_id: str = '', context_id: str = '') -> Message:
    return Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        task_id=task_id,
        context_id=context_id,
        parts=[data_part(payload)],
    )


def tool_call(tool: str, **arguments):
    return {'tool': tool, 'arguments': arguments}


def artifact_texts(task) -> list[str]:
    return [p.text for a in task.artifacts for p in a.parts if p.HasField('text')]


def artifact_data(task) -> list:
    return [
        ints(json_format.MessageToDict(p.data))
        for a in task.artifacts
        for p in a.parts
        if p.HasField('data')
    ]


def error_code(exc: BaseException):
    return JSON_RPC_ERROR_CODE_MAP.get(type(exc))


def describe_error(exc: BaseException) -> dict:
    return {
        'type': type(exc).__name__,
        'code': error_code(exc),
        'message': str(exc)[:300],
    }


def event_label(resp) -> str:
    kind = resp.WhichOneof('payload')
    if kind == 'task':
        return f'task:{short_state(resp.task.status.state)}'
    if kind == 'status_update':
        return f'status:{short_state(resp.status_update.status.state)}'
    if kind == 'artifact_update':
        return 'artifact'
    if kind == 'message':
        return 'message'
    return f'unknown:{kind}'


def collapse(labels: list[str]) -> list[str]:
    out: list[str] = []
    for label in labels:
        if not out or out[-1] != label:
            out.append(label)
    return out


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(f'check failed: {what}')


# ---------------------------------------------------------------- push receiver


class PushReceiver:
    """A tiny webhook receiver on 127.0.0.1 collecting POSTed JSON bodies."""

    def __init__(self) -> None:
        self.received: list[dict] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get('Content-Length') or 0)
                raw = self.rfile.read(length) if length else b''
                try:
                    body = json.loads(raw or b'null')
                except ValueError:
                    body = {'unparsed': raw.decode('utf-8', 'replace')[:500]}
                with receiver.lock:
                    receiver.received.append(
                        {
                            'path': self.path,
                            'body': body,
                            'authorization': self.headers.get('Authorization'),
                            'token': self.headers.get('X-A2A-Notification-Token'),
                            'content_type': self.headers.get('Content-Type'),
                        }
                    )
                self.send_response(200)
                self.send_header('Content-Length', '0')
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}'
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def snapshot(self) -> list[dict]:
        with self.lock:
            return list(self.received)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def notification_label(body) -> str:
    if not isinstance(body, dict):
        return 'invalid'
    for key, value in body.items():
        if key == 'task':
            return 'task:' + str(value.get('status', {}).get('state', '')).removeprefix('TASK_STATE_')
        if key in ('statusUpdate', 'status_update'):
            return 'status:' + str(value.get('status', {}).get('state', '')).removeprefix('TASK_STATE_')
        if key in ('artifactUpdate', 'artifact_update'):
            return 'artifact'
        if key == 'message':
            return 'message'
    return 'unknown:' + ','.join(sorted(body))


# ---------------------------------------------------------------- the run


class Run:
    def __init__(self, base: str, binding: str) -> None:
        self.base = base.rstrip('/')
        self.binding = binding
        self.protocol = 'HTTP+JSON' if binding == 'rest' else 'JSONRPC'
        self.results: dict = {'binding': binding}
        self.blocking_task_id: str | None = None

    async def setup(self) -> None:
        self.http = httpx.AsyncClient(timeout=HTTP_TIMEOUT, headers=VERSION_HEADERS)
        resolver = A2ACardResolver(self.http, self.base)
        self.card = await resolver.get_agent_card()
        self.urls = {i.protocol_binding: i.url for i in self.card.supported_interfaces}
        self.jsonrpc_url = self.urls.get('JSONRPC')
        self.rest_url = self.urls.get('HTTP+JSON')

    def factory(self, streaming: bool, own_http: bool = False) -> ClientFactory:
        http = (
            httpx.AsyncClient(timeout=HTTP_TIMEOUT, headers=VERSION_HEADERS)
            if own_http
            else self.http
        )
        return ClientFactory(
            ClientConfig(
                streaming=streaming,
                httpx_client=http,
                supported_protocol_bindings=[self.protocol],
                use_client_preference=True,
            )
        )

    def make_clients(self) -> None:
        self.blocking = self.factory(streaming=False).create(self.card)
        self.streaming = self.factory(streaming=True).create(self.card)

    async def send(self, payload, *, return_immediately=False, push=None, task_id='', context_id=''):
        """A non-streaming send; returns the Task (or raises)."""
        config = SendMessageConfiguration(return_immediately=return_immediately)
        if push is not None:
            config.task_push_notification_config.CopyFrom(push)
        request = SendMessageRequest(
            message=user_message(payload, task_id, context_id), configuration=config
        )
        result = None
        async for resp in self.blocking.send_message(request):
            result = resp
        check(result is not None, 'send returned no response')
        check(result.HasField('task'), f'send answered with {result.WhichOneof("payload")}, not a task')
        return result.task

    async def stream_labels(self, iterator, limit: int = 500):
        labels, events = [], []
        async for resp in iterator:
            labels.append(event_label(resp))
            events.append(resp)
            if len(labels) >= limit:
                break
        return labels, events

    async def run_check(self, name: str, fn) -> None:
        record: dict = {}
        self.results[name] = record
        try:
            await asyncio.wait_for(fn(record), CHECK_TIMEOUT)
        except BaseException as exc:  # noqa: BLE001 -- record and go on
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            if isinstance(exc, asyncio.TimeoutError):
                msg = f'timed out after {CHECK_TIMEOUT}s'
            else:
                msg = f'{type(exc).__name__}: {exc}'
            record['error'] = msg[:1000]
            print(f'--- check {name} failed', file=sys.stderr)
            traceback.print_exc(file=sys.stderr)

    # ------------------------------------------------------------ checks

    async def c_card(self, r: dict) -> None:
        r['name'] = self.card.name
        r['skill_ids'] = [s.id for s in self.card.skills]
        r['bindings'] = [i.protocol_binding for i in self.card.supported_interfaces]
        r['interfaces'] = [
            {'url': i.url, 'protocolBinding': i.protocol_binding, 'protocolVersion': i.protocol_version}
            for i in self.card.supported_interfaces
        ]
        r['streaming'] = self.card.capabilities.streaming
        r['push_notifications'] = self.card.capabilities.push_notifications
        check(self.protocol in r['bindings'], f'card lists a {self.protocol} interface')

    async def c_blocking(self, r: dict) -> None:
        task = await self.send(tool_call('echo', message='hello a2a'))
        self.blocking_task_id = task.id
        r['task_id'] = task.id
        r['state'] = short_state(task.status.state)
        r['texts'] = artifact_texts(task)
        r['history_length'] = len(task.history)
        check(r['state'] == 'COMPLETED', 'echo completes')
        check(any('hello a2a' in t for t in r['texts']), 'artifact text carries the echo')

    async def c_structured(self, r: dict) -> None:
        task = await self.send(tool_call('compute_stats', numbers=[1, 2, 3]))
        r['state'] = short_state(task.status.state)
        data = artifact_data(task)
        r['data'] = data[0] if data else None
        r['texts'] = artifact_texts(task)
        check(r['state'] == 'COMPLETED', 'compute_stats completes')
        check(isinstance(r['data'], dict), 'artifact has a data part')

    async def c_tool_error(self, r: dict) -> None:
        for key, payload in (
            ('empty_numbers', tool_call('compute_stats', numbers=[])),
            ('unknown_tool', tool_call('no_such_tool')),
        ):
            try:
                task = await self.send(payload)
                r[key] = {
                    'state': short_state(task.status.state),
                    'status_texts': [p.text for p in task.status.message.parts if p.HasField('text')],
                }
            except A2AError as exc:
                r[key] = {'exception': describe_error(exc)}
        for key in ('empty_numbers', 'unknown_tool'):
            check(r[key].get('state') in ('FAILED', 'REJECTED'), f'{key} ends FAILED or REJECTED')

    async def c_streaming(self, r: dict) -> None:
        request = SendMessageRequest(
            message=user_message(tool_call('long_task', steps=3, step_ms=50))
        )
        labels, events = await self.stream_labels(self.streaming.send_message(request))
        r['events'] = labels
        progress = [
            e.status_update.status.message
            for e in events
            if e.WhichOneof('payload') == 'status_update'
            and e.status_update.status.state == TaskState.TASK_STATE_WORKING
            and e.status_update.status.HasField('message')
            and len(e.status_update.status.message.parts) > 0
        ]
        r['working_with_message'] = len(progress)
        r['progress_texts'] = [p.text for m in progress for p in m.parts if p.HasField('text')][:10]
        r['artifact_texts'] = [
            p.text
            for e in events
            if e.WhichOneof('payload') == 'artifact_update'
            for p in e.artifact_update.artifact.parts
            if p.HasField('text')
        ]
        check(bool(labels) and labels[0].startswith('task:'), 'first event is the task')
        check('status:WORKING' in labels, 'a WORKING status update')
        check('artifact' in labels, 'an artifact update')
        check(labels[-1] == 'status:COMPLETED', 'the stream ends with COMPLETED')

    async def c_get_history(self, r: dict) -> None:
        check(self.blocking_task_id is not None, 'the blocking check made a task')
        full = await self.blocking.get_task(GetTaskRequest(id=self.blocking_task_id))
        one = await self.blocking.get_task(GetTaskRequest(id=self.blocking_task_id, history_length=1))
        r['state'] = short_state(full.status.state)
        r['history_full'] = len(full.history)
        r['history_1'] = len(one.history)
        check(r['history_1'] <= 1, 'historyLength=1 limits the history')
        check(r['history_1'] == min(1, r['history_full']), 'historyLength=1 keeps the last message')

    async def c_list(self, r: dict) -> None:
        for i in range(3):
            await self.send(tool_call('echo', message=f'list {i}'))
        pages, tasks, tokens = [], [], []
        token = ''
        for _ in range(200):
            resp = await self.blocking.list_tasks(ListTasksRequest(page_size=2, page_token=token))
            pages.append(len(resp.tasks))
            tasks.extend(resp.tasks)
            tokens.append(resp.next_page_token)
            r['total_size'] = resp.total_size
            token = resp.next_page_token
            if not token:
                break
        r['page_sizes'] = pages
        r['count'] = len(tasks)
        r['distinct'] = len({t.id for t in tasks})
        stamps = [t.status.timestamp.ToNanoseconds() for t in tasks]
        r['newest_first'] = all(a >= b for a, b in zip(stamps, stamps[1:]))
        r['last_next_page_token'] = tokens[-1] if tokens else None
        # The SDK cannot tell a missing nextPageToken from "": look at the wire.
        r['raw_last_page'] = await self.raw_list_last_page()
        check(all(n <= 2 for n in pages), 'pageSize=2 is honoured')
        check(r['count'] >= 4, 'at least the 4 echo tasks are listed')
        check(r['count'] == r['distinct'], 'no task is listed twice')
        check(r['newest_first'], 'newest first by status timestamp')
        check(r['last_next_page_token'] == '', 'the last page has an empty nextPageToken')
        check(r['raw_last_page'].get('nextPageToken') == '', 'nextPageToken "" is on the wire')

    async def raw_list_last_page(self) -> dict:
        token = ''
        for _ in range(200):
            if self.binding == 'rest':
                params = {'pageSize': '2'}
                if token:
                    params['pageToken'] = token
                resp = await self.http.get(f'{self.rest_url}/tasks', params=params)
                body = resp.json()
            else:
                params = {'pageSize': 2}
                if token:
                    params['pageToken'] = token
                resp = await self.http.post(
                    self.jsonrpc_url,
                    json={'jsonrpc': '2.0', 'id': 1, 'method': 'ListTasks', 'params': params},
                )
                body = resp.json().get('result', {})
            token = body.get('nextPageToken')
            if not token:
                return {
                    'has_key': 'nextPageToken' in body,
                    'nextPageToken': body.get('nextPageToken'),
                    'pageSize': body.get('pageSize'),
                    'totalSize': body.get('totalSize'),
                }
        return {'error': 'more than 200 pages'}

    async def c_cancel(self, r: dict) -> None:
        task = await self.send(tool_call('long_task', steps=50, step_ms=100), return_immediately=True)
        r['initial_state'] = short_state(task.status.state)
        canceled = await self.blocking.cancel_task(CancelTaskRequest(id=task.id))
        r['state'] = short_state(canceled.status.state)
        after = await self.blocking.get_task(GetTaskRequest(id=task.id))
        r['state_after_get'] = short_state(after.status.state)
        try:
            again = await self.blocking.cancel_task(CancelTaskRequest(id=task.id))
            r['second_cancel'] = {'state': short_state(again.status.state)}
        except A2AError as exc:
            r['second_cancel'] = describe_error(exc)
        check(r['initial_state'] in ('SUBMITTED', 'WORKING'), 'returnImmediately gives a live task')
        check(r['state'] == 'CANCELED', 'cancel gives CANCELED')
        check(r['state_after_get'] == 'CANCELED', 'the task stays CANCELED')
        check(r['second_cancel'].get('code') == -32002, 'a second cancel is TaskNotCancelable (-32002)')

    async def c_subscribe_two(self, r: dict) -> None:
        task = await self.send(tool_call('long_task', steps=5, step_ms=100), return_immediately=True)
        r['initial_state'] = short_state(task.status.state)
        clients = [self.factory(streaming=True, own_http=True).create(self.card) for _ in range(2)]
        try:
            results = await asyncio.gather(
                *(self.stream_labels(c.subscribe(SubscribeToTaskRequest(id=task.id))) for c in clients)
            )
        finally:
            for c in clients:
                await c.close()
        a, b = results[0][0], results[1][0]
        r['first'] = a
        r['second'] = b
        r['equal'] = a == b
        r['equal_collapsed'] = collapse(a) == collapse(b)
        check(bool(a) and a[-1].endswith(':COMPLETED'), 'first subscriber sees COMPLETED')
        check(bool(b) and b[-1].endswith(':COMPLETED'), 'second subscriber sees COMPLETED')
        check(r['equal_collapsed'], 'both subscribers see the same states')

    async def c_input_required(self, r: dict) -> None:
        task = await self.send(tool_call('book_table', restaurant='Chez A2A'))
        r['state'] = short_state(task.status.state)
        r['status_parts'] = [part_json(p) for p in task.status.message.parts]
        check(r['state'] == 'INPUT_REQUIRED', 'book_table asks for input')
        reply = {
            'inputResponses': {
                'booking': {'action': 'accept', 'content': {'name': 'Ada', 'guests': 2}}
            }
        }
        final = await self.send(reply, task_id=task.id, context_id=task.context_id)
        r['same_task'] = final.id == task.id
        r['final_state'] = short_state(final.status.state)
        r['final_texts'] = artifact_texts(final)
        check(r['final_state'] == 'COMPLETED', 'the booking completes after the answer')

    async def c_push(self, r: dict) -> None:
        receiver = PushReceiver()
        try:
            await self._push(r, receiver)
        finally:
            r['received'] = [
                {
                    'path': n['path'],
                    'event': notification_label(n['body']),
                    'token': n['token'],
                    'authorization': n['authorization'],
                }
                for n in receiver.snapshot()
            ][:50]
            receiver.close()

    async def _push(self, r: dict, receiver: PushReceiver) -> None:
        # The config given with the send sees every event (no race with a fast task).
        # An explicit id: a server that defaults a config's id to the task id
        # (a2a-sdk does) would otherwise let the created config replace it.
        send_cfg = TaskPushNotificationConfig(
            id='push-send',
            url=f'{receiver.url}/send',
            token='tok-123',
            authentication=AuthenticationInfo(scheme='Bearer', credentials='push-cred'),
        )
        task = await self.send(
            tool_call('long_task', steps=2, step_ms=50), return_immediately=True, push=send_cfg
        )
        r['task_id'] = task.id
        # A second config through CreateTaskPushNotificationConfig.
        created = await self.blocking.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task.id, url=f'{receiver.url}/created', token='tok-123')
        )
        r['created'] = {'id': created.id, 'task_id_matches': created.task_id == task.id,
                        'url_matches': created.url == f'{receiver.url}/created',
                        'token': created.token}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            labels = [notification_label(n['body']) for n in receiver.snapshot()]
            if any(lbl.endswith(':COMPLETED') for lbl in labels):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # let a notification for the other config land too
        seen = receiver.snapshot()
        sent = [n for n in seen if n['path'] == '/send']
        made = [n for n in seen if n['path'] == '/created']
        r['states'] = [notification_label(n['body']) for n in seen]
        r['states_send_config'] = [notification_label(n['body']) for n in sent]
        r['states_created_config'] = [notification_label(n['body']) for n in made]
        r['token_headers'] = sorted({str(n['token']) for n in seen})
        r['token_header'] = seen[0]['token'] if seen else None
        r['authorization_header'] = sent[0]['authorization'] if sent else None
        r['content_type'] = seen[0]['content_type'] if seen else None

        got = await self.blocking.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
        )
        r['get'] = {'id': got.id, 'url_matches': got.url == created.url, 'token': got.token}
        listed = await self.blocking.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        r['list_count'] = len(listed.configs)
        r['list_urls'] = sorted(c.url.removeprefix(receiver.url) for c in listed.configs)
        deletes = []
        for _ in range(2):
            try:
                await self.blocking.delete_task_push_notification_config(
                    DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
                )
                deletes.append('ok')
            except A2AError as exc:
                deletes.append(describe_error(exc))
        r['delete'] = deletes
        listed = await self.blocking.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        r['list_count_after_delete'] = len(listed.configs)

        check(any(s.endswith(':COMPLETED') for s in r['states']), 'a COMPLETED notification arrived')
        check(r['token_headers'] == ['tok-123'], 'X-A2A-Notification-Token: tok-123 on every notification')
        check(bool(created.id), 'the created config has an id')
        check(r['get']['url_matches'], 'get returns the created config')
        check(r['list_count'] >= 1, 'list returns the configs')
        check(deletes == ['ok', 'ok'], 'delete is idempotent')
        check(r['list_count_after_delete'] == r['list_count'] - 1, 'delete removed the config')

    async def c_errors(self, r: dict) -> None:
        url = self.jsonrpc_url
        check(url is not None, 'card has a JSONRPC interface')

        async def rpc(body, headers=None, raw=None):
            h = dict(VERSION_HEADERS)
            h.update(headers or {})
            if raw is not None:
                h['Content-Type'] = 'application/json'
                resp = await self.http.post(url, content=raw, headers=h)
            else:
                resp = await self.http.post(url, json=body, headers=h)
            return resp.status_code, resp.json()

        status, body = await rpc({'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'nope'}})
        err = body.get('error') or {}
        data = err.get('data')
        infos = [d for d in data if isinstance(d, dict) and str(d.get('@type', '')).endswith('google.rpc.ErrorInfo')] if isinstance(data, list) else []
        r['task_not_found'] = {
            'http_status': status,
            'code': err.get('code'),
            'id': body.get('id'),
            'data_is_list': isinstance(data, list),
            'error_info': bool(infos),
            'reason': infos[0].get('reason') if infos else None,
            'domain': infos[0].get('domain') if infos else None,
        }
        status, body = await rpc(
            {'jsonrpc': '2.0', 'id': 2, 'method': 'GetTask', 'params': {'id': 'nope'}},
            headers={'A2A-Version': '9.9'},
        )
        r['version_not_supported'] = {'http_status': status, 'code': (body.get('error') or {}).get('code')}
        status, body = await rpc(None, raw=b'{"jsonrpc": "2.0", "id": 3, "method": ')
        r['parse_error'] = {'http_status': status, 'code': (body.get('error') or {}).get('code'), 'id': body.get('id', 'absent')}
        status, body = await rpc({'jsonrpc': '2.0', 'id': 4, 'method': 'NoSuchMethod', 'params': {}})
        r['method_not_found'] = {'http_status': status, 'code': (body.get('error') or {}).get('code')}
        check(r['task_not_found']['code'] == -32001, 'GetTask nope is -32001')
        check(r['task_not_found']['error_info'], 'error.data holds a google.rpc.ErrorInfo')
        check(r['version_not_supported']['code'] == -32009, 'A2A-Version 9.9 is -32009')
        check(r['parse_error']['code'] == -32700, 'malformed JSON is -32700')

    async def c_rest_errors(self, r: dict) -> None:
        check(self.rest_url is not None, 'card has an HTTP+JSON interface')
        resp = await self.http.get(f'{self.rest_url}/tasks/nope')
        r['task_not_found'] = self._rest_error(resp)
        resp = await self.http.get(f'{self.rest_url}/tasks/nope', headers={'A2A-Version': '9.9'})
        r['version_not_supported'] = self._rest_error(resp)
        check(r['task_not_found']['http_status'] == 404, 'GET /tasks/nope is 404')
        check(r['task_not_found']['reason'] == 'TASK_NOT_FOUND', 'reason TASK_NOT_FOUND')
        check(r['version_not_supported']['reason'] == 'VERSION_NOT_SUPPORTED', 'reason VERSION_NOT_SUPPORTED')

    @staticmethod
    def _rest_error(resp: httpx.Response) -> dict:
        out = {'http_status': resp.status_code, 'content_type': resp.headers.get('content-type')}
        try:
            body = resp.json()
        except ValueError:
            out['body'] = resp.text[:300]
            return out
        err = body.get('error') if isinstance(body, dict) else None
        err = err if isinstance(err, dict) else {}
        details = err.get('details') if isinstance(err.get('details'), list) else []
        infos = [d for d in details if isinstance(d, dict) and str(d.get('@type', '')).endswith('google.rpc.ErrorInfo')]
        out.update(
            code=err.get('code'),
            status=err.get('status'),
            reason=infos[0].get('reason') if infos else None,
        )
        return out

    async def main(self) -> int:
        try:
            await self.setup()
            self.make_clients()
        except Exception as exc:  # noqa: BLE001
            traceback.print_exc(file=sys.stderr)
            self.results['fatal'] = f'{type(exc).__name__}: {exc}'[:1000]
            return 1
        checks = [
            ('card', self.c_card),
            ('blocking', self.c_blocking),
            ('structured', self.c_structured),
            ('tool_error', self.c_tool_error),
            ('streaming', self.c_streaming),
            ('get_history', self.c_get_history),
            ('list', self.c_list),
            ('cancel', self.c_cancel),
            ('subscribe_two', self.c_subscribe_two),
            ('input_required', self.c_input_required),
            ('push', self.c_push),
        ]
        checks.append(('rest_errors', self.c_rest_errors) if self.binding == 'rest' else ('errors', self.c_errors))
        for name, fn in checks:
            await self.run_check(name, fn)
        for c in (self.blocking, self.streaming):
            try:
                await c.close()
            except Exception:  # noqa: BLE001
                pass
        await self.http.aclose()
        failed = [k for k, v in self.results.items() if isinstance(v, dict) and 'error' in v]
        self.results['failed'] = failed
        return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('base_url')
    parser.add_argument('--binding', choices=['jsonrpc', 'rest'], default='jsonrpc')
    args = parser.parse_args()
    run = Run(args.base_url, args.binding)
    try:
        code = asyncio.run(run.main())
    except BaseException as exc:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        run.results['fatal'] = f'{type(exc).__name__}: {exc}'[:1000]
        code = 1
    sys.stdout.write(json.dumps(run.results, sort_keys=True) + '\n')
    sys.stdout.flush()
    sys.exit(code)


if __name__ == '__main__':
    main()
