"""Websocket entry checks: the Origin of the handshake, the shape of each frame,
and the per-connection rate limit."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest
from channels.db import database_sync_to_async

from challenges.models import Challenge, ClientAction
from challenges.ratelimit import FLOOD_MESSAGE, OWED_HEARTBEAT_SECONDS, REFUSED_MESSAGE
from challenges.schema import SCHEMAS, FrameRefused, parse_frame
from characters.models import GameSession
from narrator.wsorigin import origin_allowed
from tests.challenges.wsutil import act, drain
from tests.security.wsrec import WAIT, open_socket, snapshot


# Origin ----------------------------------------------------------------------
def _scope(
    origin: str | None, host: str = "192.168.1.20:8000", scheme: str | None = None, **headers
) -> dict:
    """A handshake's scope: ``scheme`` "ws"/"wss" (None: left out, as the ASGI
    default "ws"), extra ``headers`` by name (``x_forwarded_proto="https"``)."""
    pairs = [(b"host", host.encode())]
    if origin is not None:
        pairs.append((b"origin", origin.encode()))
    pairs += [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    scope = {"type": "websocket", "headers": pairs}
    if scheme is not None:
        scope["scheme"] = scheme
    return scope


@pytest.mark.parametrize(
    "origin, host, scheme, allowed",
    [
        ("http://192.168.1.20:8000", "192.168.1.20:8000", None, True),
        ("http://192.168.1.20:8000", "192.168.1.20:8000", "ws", True),
        ("https://narrator.example.org", "narrator.example.org", "wss", True),
        ("https://narrator.example.org:443", "narrator.example.org", "wss", True),
        ("https://narrator.example.org", "narrator.example.org:443", "wss", True),
        ("http://narrator.example.org", "narrator.example.org:80", "ws", True),
        ("HTTP://Narrator.Example.org", "narrator.example.org", "ws", True),
        (None, "192.168.1.20:8000", None, True),  # not a browser: carries no victim's cookie
        ("http://evil.example.com", "192.168.1.20:8000", None, False),
        ("http://192.168.1.20:9000", "192.168.1.20:8000", None, False),
        ("http://192.168.1.20", "192.168.1.20:8000", None, False),
        ("http://narrator.example.org.evil.com", "narrator.example.org", None, False),
        ("null", "192.168.1.20:8000", None, False),
        ("file://", "192.168.1.20:8000", None, False),
        ("http://192.168.1.20:notaport", "192.168.1.20:8000", None, False),
        ("http://192.168.1.20:8000", "", None, False),
        # The scheme counts, as in Django's CSRF check: a plain-HTTP page may
        # not open a socket to the HTTPS site, nor the other way round.
        ("http://narrator.example.org", "narrator.example.org", "wss", False),
        ("https://narrator.example.org", "narrator.example.org", "ws", False),
        ("https://narrator.example.org", "narrator.example.org", None, False),
        ("http://narrator.example.org:443", "narrator.example.org", "wss", False),
        ("https://narrator.example.org:80", "narrator.example.org:80", "ws", False),
    ],
)
def test_a_handshake_is_allowed_only_from_the_same_scheme_host_and_port(
    origin, host, scheme, allowed
):
    assert origin_allowed(_scope(origin, host, scheme)) is allowed


@pytest.mark.parametrize(
    "origin, scheme, forwarded, allowed",
    [
        ("https://narrator.example.org", "ws", "https", True),
        ("https://narrator.example.org", "ws", "https, http", True),
        ("http://narrator.example.org", "ws", "https", False),
        ("https://narrator.example.org", "wss", "http", False),
        ("http://narrator.example.org", "wss", "http", True),
        ("https://narrator.example.org", "wss", None, True),  # no header: the socket's own
        ("http://narrator.example.org", "ws", None, True),
    ],
)
def test_behind_a_tls_proxy_the_forwarded_proto_is_the_sockets_scheme(
    settings, origin, scheme, forwarded, allowed
):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    headers = {} if forwarded is None else {"x_forwarded_proto": forwarded}
    scope = _scope(origin, "narrator.example.org", scheme, **headers)
    assert origin_allowed(scope) is allowed


def test_without_a_proxy_setting_a_forwarded_proto_is_ignored(settings):
    settings.SECURE_PROXY_SSL_HEADER = None
    scope = _scope("https://narrator.example.org", "narrator.example.org", "ws")
    scope["headers"].append((b"x-forwarded-proto", b"https"))
    assert not origin_allowed(scope)


def test_an_origin_listed_in_csrf_trusted_origins_is_allowed(settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://narrator.example.org", "https://*.larp.example"]
    assert origin_allowed(_scope("https://narrator.example.org", "app1:8000"))
    assert origin_allowed(_scope("https://tablet.larp.example", "app1:8000"))
    assert not origin_allowed(_scope("http://narrator.example.org", "app1:8000"))
    assert not origin_allowed(_scope("https://larp.example.evil.org", "app1:8000"))


@pytest.mark.django_db(transaction=True)
async def test_a_cross_site_page_cannot_open_a_players_socket_even_with_her_cookie(game):
    path = f"/ws/play/{game['helen'].pk}/"
    socket, first = await open_socket(path, game["helen_player"], origin=b"http://evil.example")
    assert first == "refused"  # closed before accept: the handshake fails
    socket, first = await open_socket(path, game["helen_player"])
    assert "Ferocious" in first
    await socket.disconnect()


# Frame schema ---------------------------------------------------------------------
ALL = frozenset(SCHEMAS)


def _frame(**fields) -> str:
    return json.dumps({"id": "m1", **fields})


@pytest.mark.parametrize(
    "text, action, expected",
    [
        (
            _frame(action="challenge.open", defender="3", bid="physical:Quick", is_attack="on"),
            "challenge.open",
            {"defender": 3, "bid": "physical:Quick", "is_attack": True, "stakes": None},
        ),
        (
            _frame(action="challenge.bid", challenge=12, bid="Tough"),
            "challenge.bid",
            {"challenge": 12},
        ),
        (_frame(action="challenge.relent", challenge="12"), "challenge.relent", {"challenge": 12}),
        (
            _frame(action="challenge.throw", challenge="12", throw="rock"),
            "challenge.throw",
            {"throw": "rock"},
        ),
        (
            _frame(action="challenge.declare", challenge="12", count=""),
            "challenge.declare",
            {"count": None},
        ),
        (_frame(action="session.time_out"), "session.time_out", {"id": "m1"}),
        (
            _frame(action="static.open", character="4", category="mental", difficulty="5"),
            "static.open",
            {"difficulty": 5, "narrator_throw": None},
        ),
        (
            _frame(action="simple.open", character="4", narrator_throw="paper", stakes=""),
            "simple.open",
            {"narrator_throw": "paper", "stakes": None},
        ),
        (
            _frame(action="challenge.void", challenge="9", HEADERS={"HX-Request": "true"}),
            "challenge.void",
            {"challenge": 9, "reason": None},
        ),
        ('{"action": "ping", "anything": [1]}', "ping", {"anything": [1]}),
        ('{"action": "ping", "v": null}', "ping", {"v": None}),
        ('{"action": "ping", "v": "0123456789abcdef"}', "ping", {"v": "0123456789abcdef"}),
        ('{"action": "sync", "v": [1]}', "sync", {"v": [1]}),  # a sync echoes nothing
    ],
)
def test_well_formed_frames_come_out_typed(text, action, expected):
    got_action, fields = parse_frame(text, None, allowed=ALL)
    assert got_action == action
    assert {k: fields[k] for k in expected} == expected
    assert "HEADERS" not in fields


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "not text"),
        ("x" * 5000, "too large"),
        ("é" * 2100, "too large"),  # 4200 bytes
        ("not json", "not valid JSON"),
        ("[" * 3000 + "]" * 3000, "too large"),
        ("[" * 2000 + "]" * 2000, "not valid JSON"),  # deeper than Python's recursion
        ("[1, 2]", "not an action"),
        ('"challenge.throw"', "not an action"),
        (_frame(action="challenge.explode"), "Unknown action."),
        (_frame(action=["challenge.throw"]), "Unknown action."),
        (json.dumps({"action": "challenge.relent", "challenge": 1}), "'id' is missing."),
        (json.dumps({"id": "", "action": "challenge.relent", "challenge": 1}), "'id' is empty."),
        (json.dumps({"id": 5, "action": "challenge.relent", "challenge": 1}), "'id' is not valid."),
        (
            json.dumps({"id": "x" * 65, "action": "challenge.relent", "challenge": 1}),
            "'id' is too long.",
        ),
        (_frame(action="challenge.relent"), "'challenge' is missing."),
        (_frame(action="challenge.relent", challenge="a"), "'challenge' must be a number."),
        (_frame(action="challenge.relent", challenge=True), "'challenge' must be a number."),
        (_frame(action="challenge.relent", challenge=1.5), "'challenge' must be a number."),
        (_frame(action="challenge.relent", challenge="1e9"), "'challenge' must be a number."),
        (_frame(action="challenge.relent", challenge="١٢"), "'challenge' must be a number."),
        (_frame(action="challenge.relent", challenge=-1), "'challenge' is out of range."),
        (_frame(action="challenge.relent", challenge=10**30), "'challenge' is out of range."),
        (_frame(action="challenge.relent", challenge=[1]), "'challenge' must be a number."),
        (
            _frame(action="challenge.relent", challenge=1, bid="x"),
            "'bid' is not part of this action.",
        ),
        (
            _frame(action="challenge.throw", challenge=1, throw="Spock"),
            "must be rock, paper or scissors",
        ),
        (_frame(action="challenge.bid", challenge=1, bids=["Quick"] * 6), "'bids' is too long."),
        (_frame(action="challenge.bid", challenge=1, bids=[""]), "'bids' is empty."),
        (_frame(action="challenge.bid", challenge=1, bids=[{"a": 1}]), "'bids' is not valid."),
        (
            _frame(action="challenge.retest", challenge=1, kind="spock"),
            "'kind' must be overbid, ability, discipline or willpower.",
        ),
        (_frame(action="challenge.negative", challenge=1), "'name' is missing."),
        (_frame(action="challenge.blood", challenge=1, amount="1e9"), "must be a number"),
        (_frame(action="challenge.bid", challenge=1, bid="x" * 101), "'bid' is too long."),
        (_frame(action="challenge.bid", challenge=1, bid=["a", "b"]), "'bid' is not valid."),
        (_frame(action="challenge.bid", challenge=1, bid="Tough\x00"), "has control characters"),
        (
            _frame(action="challenge.open", defender=1, bid="physical:Quick", stakes="\ud800"),
            "cannot be stored",
        ),
        (
            _frame(action="challenge.open", defender=1, bid="physical:Quick", is_attack={}),
            "'is_attack' must be yes or no.",
        ),
        (_frame(action="challenge.declare", challenge=1, count="-3"), "'count' must be a number."),
        (_frame(action="static.open", character=1, category="mental"), "'difficulty' is missing."),
        ('{"action": "ping", "v": {"a": 1}}', "'v' must be the stamp of a view"),
        ('{"action": "ping", "v": ["a"]}', "'v' must be the stamp of a view"),
        ('{"action": "ping", "v": 7}', "'v' must be the stamp of a view"),
        ('{"action": "ping", "v": false}', "'v' must be the stamp of a view"),
        (json.dumps({"action": "ping", "v": "f" * 65}), "'v' must be the stamp of a view"),
    ],
)
def test_malformed_frames_are_refused_in_plain_words(text, message):
    with pytest.raises(FrameRefused) as refused:
        parse_frame(text, None, allowed=ALL)
    assert message in str(refused.value)


@pytest.mark.parametrize(
    "fields, key, kept",
    [
        # A right-to-left override would turn the rest of a dashboard row around.
        (
            {"action": "challenge.void", "challenge": 1, "reason": "\u202eruled out"},
            "reason",
            "ruled out",
        ),
        ({"action": "challenge.void", "challenge": 1, "reason": "\u200b\u2066"}, "reason", None),
        (
            {
                "action": "challenge.open",
                "defender": 1,
                "bid": "physical:Qu\u200bick",
                "stakes": "I bite\u200f your \ufeffshoulder",
            },
            "stakes",
            "I bite your shoulder",
        ),
        # A bid names a Trait already on the sheet: kept as sent, to match the stored
        # name exactly (a sheet saved before names were cleaned may hold such characters).
        (
            {"action": "challenge.open", "defender": 1, "bid": "physical:Qu\u200bick"},
            "bid",
            "physical:Qu\u200bick",
        ),
        (
            {"action": "challenge.bid", "challenge": 1, "bid": "\u202eResilient"},
            "bid",
            "\u202eResilient",
        ),
    ],
)
def test_typed_texts_lose_invisible_characters(fields, key, kept):
    _, parsed = parse_frame(_frame(**fields), None, allowed=ALL)
    assert parsed.get(key) == kept


def test_a_bytes_frame_is_refused():
    with pytest.raises(FrameRefused, match="not text"):
        parse_frame(None, b'{"action": "ping"}', allowed=ALL)


def test_an_action_of_the_other_consumer_is_unknown_here():
    text = _frame(action="session.time_out")
    with pytest.raises(FrameRefused, match="Unknown action") as refused:
        parse_frame(text, None, allowed={"challenge.throw"})
    assert refused.value.msg_id == "m1"  # so the phone can match the error to its action


@pytest.mark.django_db(transaction=True)
async def test_a_refused_frame_answers_with_an_error_and_changes_nothing(game):
    helen, _ = await open_socket(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    before = await snapshot()
    frame = _frame(action="challenge.open", defender=str(game["grady"].pk), bid="physical:Quick")
    wrong_type = _frame(action="challenge.open", defender=True, bid="physical:Quick")
    for bad in (frame.replace('"m1"', '"m1", "extra": 1'), wrong_type):
        await helen.send_to(text_data=bad)
        reply = json.loads(await helen.receive_from(timeout=5))
        assert reply["type"] == "error" and reply["id"] == "m1", reply
    assert await snapshot() == before
    reply, _ = await act(helen, "m1", **json.loads(frame))  # the same id, well formed: applied
    assert reply == {"type": "ack", "id": "m1", "status": "ok"}
    await helen.disconnect()


# Rate limit (the limiter itself: test_ratelimit.py) ----------------------------
@database_sync_to_async
def _applied(session_pk: int) -> tuple[set[str], bool]:
    """The message ids applied (``ClientAction``) and the session's Time out."""
    return (
        set(ClientAction.objects.values_list("msg_id", flat=True)),
        GameSession.objects.get(pk=session_pk).time_out,
    )


@pytest.mark.django_db(transaction=True)
async def test_a_bunch_of_30_rulings_gets_refusals_but_the_socket_stays_open(game, settings):
    """A narrator's 30 rulings read at once (an overloaded server reads a
    dashboard's taps late and bunched): the burst is applied, the rest refused
    with an error naming their ids, nothing of them kept, and the socket stays
    open: a ping and a sync sent while the bucket is empty are answered a
    moment later. A refill slower than the machine (one token in 10 s) makes
    the count of refusals independent of its speed."""
    settings.WS_RATE, settings.WS_BURST, settings.WS_LATE_SECONDS = 0.1, 20.0, 600.0
    session = game["session"]
    dashboard, _ = await open_socket(f"/ws/narrate/{session.pk}/", game["narrator"])
    actions = ["session.time_out", "session.resume"] * 15
    ids = [f"r{n}" for n in range(30)]
    for msg_id, action in zip(ids, actions, strict=True):
        await dashboard.send_to(text_data=json.dumps({"id": msg_id, "action": action}))
    replies: dict[str, dict] = {}
    while len(replies) < 30:
        frame = await dashboard.receive_from(timeout=WAIT)
        reply = json.loads(frame) if frame.startswith("{") else {}
        if reply.get("id") in ids:
            replies[reply["id"]] = reply
    refusal = {"type": "error", "message": REFUSED_MESSAGE}
    acked = [i for i in ids if replies[i] == {"type": "ack", "id": i, "status": "ok"}]
    refused = [i for i in ids if replies[i] == {**refusal, "id": i}]
    assert sorted(acked + refused) == sorted(ids), replies
    assert len(acked) >= 20 and len(refused) >= 5, (acked, refused)
    applied, time_out = await _applied(session.pk)
    assert applied == set(acked)  # a refused ruling changed nothing
    assert time_out is (actions[ids.index(acked[-1])] == "session.time_out")

    await drain(dashboard)  # the applied rulings' broadcasts

    sent = time.monotonic()
    await dashboard.send_to(text_data=json.dumps({"action": "ping", "v": "not-current"}))
    await dashboard.send_to(text_data='{"action": "ping"}')  # replaces the one owed
    assert await dashboard.receive_from(timeout=WAIT) == '{"type": "pong"}'
    assert time.monotonic() - sent >= OWED_HEARTBEAT_SECONDS * 0.9
    await dashboard.send_to(text_data='{"action": "sync"}')
    await dashboard.send_to(text_data='{"action": "ping"}')  # never replaces a sync
    view = await dashboard.receive_from(timeout=WAIT)
    assert view.startswith("<!--v:") and 'id="challenge-list"' in view, view[:200]
    assert await drain(dashboard, OWED_HEARTBEAT_SECONDS * 1.5) == []  # one answer for both
    await dashboard.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_flood_is_refused_then_closed_while_another_phone_keeps_its_pace(game, settings):
    """100 frames a second from Helen's phone: beyond the burst they are
    refused, one by one; once she has sent more than lateness explains (the
    flood bucket: burst + rate × WS_LATE_SECONDS) she gets one flood error,
    then close 4429, having had no more frames handled than the rate allows
    (burst plus rate × seconds). Meanwhile Grady's phone still gets every
    action answered. Counted in frames, not wall time, so a loaded machine
    neither fails it nor hides a leak in the limit."""
    # A slower refill than the default 10/s: a loaded machine handling fewer than
    # 10 frames a second would otherwise never empty the bucket (no close at all).
    settings.WS_RATE, settings.WS_BURST, settings.WS_LATE_SECONDS = 2.0, 20.0, 10.0
    helen, _ = await open_socket(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    grady, _ = await open_socket(f"/ws/play/{game['grady'].pk}/", game["grady_player"])

    async def flood() -> None:
        for n in range(100):
            frame = _frame(action="challenge.relent", challenge=999_999).replace("m1", f"f{n}")
            await helen.send_to(text_data=frame)
            await asyncio.sleep(0.01)

    async def grady_round_trips() -> list[float]:
        latencies = []
        for n in range(10):
            msg_id = f"g{n}"
            started = time.monotonic()
            await grady.send_to(
                text_data=_frame(action="challenge.relent", challenge=999_999).replace("m1", msg_id)
            )
            while True:
                reply = json.loads(await grady.receive_from(timeout=WAIT))
                if reply.get("id") == msg_id:
                    break
            assert reply["type"] == "error" and "no such challenge" in reply["message"]
            latencies.append(time.monotonic() - started)
            await asyncio.sleep(0.1)
        return latencies

    async def watch_helen() -> tuple[float, int, dict | None, int, int]:
        error, handled, refused = None, 0, 0  # the flood error; frames answered before it
        while True:
            output = await helen.receive_output(timeout=WAIT)
            if output["type"] == "websocket.close":
                return time.monotonic(), output["code"], error, handled, refused
            reply = json.loads(output.get("text", "{}"))
            assert error is None, f"a frame answered after the flood error: {reply}"
            if reply.get("message") == FLOOD_MESSAGE:
                error = reply
            elif reply.get("message") == REFUSED_MESSAGE:
                refused += 1
            elif "no such challenge" in reply.get("message", ""):
                handled += 1

    started = time.monotonic()
    flood_task = asyncio.create_task(flood())
    watch_task = asyncio.create_task(watch_helen())
    latencies = await grady_round_trips()
    await flood_task
    closed_at, code, error, handled, refused = await watch_task
    print(
        f"\nflood closed after {closed_at - started:.3f} s, {handled} frames handled and "
        f"{refused} refused; other phone's round trips "
        + ", ".join(f"{latency * 1000:.0f} ms" for latency in latencies)
    )
    assert code == 4429 and error["type"] == "error" and error["id"].startswith("f")
    seconds = closed_at - started
    allowed = settings.WS_BURST + settings.WS_RATE * seconds
    assert 0 < handled <= allowed, (handled, allowed)
    room = settings.WS_BURST + settings.WS_RATE * (settings.WS_LATE_SECONDS + seconds)
    assert refused > 0 and handled + refused <= room, (handled, refused, room)
    assert len(latencies) == 10  # Grady was answered every time (speed: manage.py bench)
    assert await database_sync_to_async(Challenge.objects.count)() == 0
    await grady.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_steady_player_is_never_throttled(game, settings):
    """Twelve heartbeats and eight actions in a row (a busy phone after waking)
    stay well inside the burst."""
    helen, _ = await open_socket(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    for _ in range(12):
        await helen.send_to(text_data='{"action": "ping"}')
        assert json.loads(await helen.receive_from(timeout=5)) == {"type": "pong"}
    for _ in range(8):
        reply, _ = await act(helen, msg_id=uuid.uuid4().hex, action="challenge.relent", challenge=1)
        assert "no such challenge" in reply["message"]
    await helen.disconnect()
