"""Driver of the LangGraph rows (bench/suites/langgraph.ts): one process per side, driven over
JSON lines (a command per line on stdin, its answer as one line on stdout).

argv[1] is a JSON object:
- {"target": "langgraph", "sqlite": PATH} or {"target": "langgraph", "postgres": URL}: a LangGraph
  graph in this process whose "model" node returns a fixed scripted tool call of bench_noop (no
  LLM), and whose "tools" node asks for a person's confirmation with `interrupt()` before running
  it; resumed with `Command(resume=...)`, the tool runs and the model node ends the turn with
  "done". Checkpointed with SqliteSaver / AsyncSqliteSaver on a file, or PostgresSaver, every
  invocation with durability="sync" (each checkpoint written before the next step runs, and the
  interrupt's before invoke returns).
- {"target": "parkway", "address": "HOST:PORT"}: the same turns against a Parkway server through
  the Python client (parkway.AsyncClient): user message "park" → REQUIRE_USER_CONFIRM (the
  scripted model's call of bench_noop) → REPLY_PARKED; confirm → REPLY_END.

Commands:
- {"op": "latency", "n": N}: N turns one after another, each on a fresh thread / session; answers
  {"park": [µs], "resume": [µs]}. Park: invoke until it returns the interrupt / the user message
  sent until REQUIRE_USER_CONFIRM arrives. Resume: invoke(Command(resume)) until it returns the
  finished state / the confirmation sent until REPLY_END arrives.
- {"op": "throughput", "sessions": S, "workers": W, "mode": "async" | "threads", "server_pid": P}:
  parks S turns (not timed), then resumes them with W concurrent workers; answers {"seconds",
  "resumes", "cpu_seconds"} (this process's CPU time during the resumes). LangGraph: "async" runs W
  asyncio tasks on AsyncSqliteSaver (its own file beside the sync one), "threads" W threads on
  SqliteSaver. Parkway: W asyncio tasks, one client channel; the sessions' streams are closed after
  the timing; with "server_pid", also "server_cpu_seconds", the CPU time of every thread of that
  process (the server) during the resumes.
- {"op": "exit"}.
"""

import asyncio
import json
import os
import sys
import time
import uuid
from importlib import metadata
from typing import Any


def now_us() -> float:
    return time.perf_counter_ns() / 1000


def versions(names: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    out["python"] = sys.version.split()[0]
    return out


# ---- LangGraph ----


def build_graph(checkpointer: Any) -> Any:
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import interrupt

    def model(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, ToolMessage):
            return {"messages": [AIMessage(content="done")]}
        call = {
            "name": "bench_noop",
            "args": {"note": "parked by the benchmark"},
            "id": f"call_{uuid.uuid4().hex}",
            "type": "tool_call",
        }
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    def tools(state: MessagesState) -> dict[str, Any]:
        call = state["messages"][-1].tool_calls[0]
        answer = interrupt({"tool_call": call, "ask": "confirm"})
        content = "ok" if answer.get("confirmed") else "denied"
        return {"messages": [ToolMessage(content=content, tool_call_id=call["id"])]}

    def route(state: MessagesState) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", tools)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["tools", END])
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer)


def user_turn() -> dict[str, Any]:
    from langchain_core.messages import HumanMessage

    return {"messages": [HumanMessage(content="park")]}


def resume_command() -> Any:
    from langgraph.types import Command

    return Command(resume={"confirmed": True})


def config_of(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def check_parked(out: dict[str, Any]) -> None:
    if not out.get("__interrupt__"):
        raise RuntimeError(f"the graph did not interrupt: {out!r}")


def check_done(out: dict[str, Any]) -> None:
    if out["messages"][-1].content != "done":
        raise RuntimeError(f"the resumed graph did not finish: {out['messages'][-1]!r}")


class LangGraphSide:
    def __init__(self, args: dict[str, Any]) -> None:
        self.args = args
        self.sqlite_path: str | None = args.get("sqlite")
        self.postgres_url: str | None = args.get("postgres")
        if self.sqlite_path:
            import sqlite3

            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(self.sqlite_path, check_same_thread=False)
            self.saver = SqliteSaver(conn)
            self.saver.setup()
            pragmas = {
                p: conn.execute(f"PRAGMA {p}").fetchone()[0]
                for p in ("journal_mode", "synchronous")
            }
            self.store = {"sqlite": sqlite3.sqlite_version, **pragmas}
        else:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg import Connection
            from psycopg.rows import dict_row

            conn = Connection.connect(
                self.postgres_url, autocommit=True, prepare_threshold=0, row_factory=dict_row
            )
            self.saver = PostgresSaver(conn)
            self.saver.setup()
            row = conn.execute("SHOW synchronous_commit").fetchone()
            self.store = {"synchronous_commit": row["synchronous_commit"] if row else "?"}
        self.graph = build_graph(self.saver)

    def hello(self) -> dict[str, Any]:
        names = [
            "langgraph",
            "langgraph-checkpoint",
            "langgraph-checkpoint-sqlite",
            "langgraph-checkpoint-postgres",
            "langchain-core",
            "aiosqlite",
            "psycopg",
        ]
        return {"versions": versions(names), "store": self.store}

    def park(self, thread: str) -> None:
        out = self.graph.invoke(user_turn(), config_of(thread), durability="sync")
        check_parked(out)

    def resume(self, thread: str) -> None:
        out = self.graph.invoke(resume_command(), config_of(thread), durability="sync")
        check_done(out)

    async def latency(self, n: int) -> dict[str, Any]:
        parks: list[float] = []
        resumes: list[float] = []
        for _ in range(n):
            thread = uuid.uuid4().hex
            t0 = now_us()
            self.park(thread)
            t1 = now_us()
            self.resume(thread)
            t2 = now_us()
            parks.append(t1 - t0)
            resumes.append(t2 - t1)
        return {"park": parks, "resume": resumes}

    async def throughput(self, sessions: int, workers: int, mode: str) -> dict[str, Any]:
        if mode == "threads":
            return self.throughput_threads(sessions, workers)
        if mode == "async":
            return await self.throughput_async(sessions, workers)
        raise ValueError(f"unknown mode {mode}")

    def throughput_threads(self, sessions: int, workers: int) -> dict[str, Any]:
        from concurrent.futures import ThreadPoolExecutor

        threads = [uuid.uuid4().hex for _ in range(sessions)]
        for thread in threads:
            self.park(thread)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(lambda _: None, range(workers)))  # start the threads before timing
            c0, t0 = time.process_time(), time.perf_counter()
            list(pool.map(self.resume, threads))
            t1, c1 = time.perf_counter(), time.process_time()
        return {"seconds": t1 - t0, "resumes": sessions, "cpu_seconds": c1 - c0}

    async def throughput_async(self, sessions: int, workers: int) -> dict[str, Any]:
        if not self.sqlite_path:
            raise ValueError("async throughput runs on SQLite only")
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(f"{self.sqlite_path}-async") as saver:
            await saver.setup()
            graph = build_graph(saver)
            threads = [uuid.uuid4().hex for _ in range(sessions)]
            for thread in threads:
                check_parked(
                    await graph.ainvoke(user_turn(), config_of(thread), durability="sync")
                )
            queue: asyncio.Queue[str] = asyncio.Queue()
            for thread in threads:
                queue.put_nowait(thread)

            async def worker() -> None:
                while not queue.empty():
                    thread = queue.get_nowait()
                    out = await graph.ainvoke(
                        resume_command(), config_of(thread), durability="sync"
                    )
                    check_done(out)

            c0, t0 = time.process_time(), time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(workers)))
            t1, c1 = time.perf_counter(), time.process_time()
        return {"seconds": t1 - t0, "resumes": sessions, "cpu_seconds": c1 - c0}

    async def close(self) -> None:
        self.saver.conn.close()


# ---- Parkway ----


def threads_cpu_seconds(pid: int | None) -> float | None:
    """CPU time of every thread of process ``pid`` so far (the scheduler's count, in ns), or None
    without a pid."""
    if pid is None:
        return None
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total / 1e9


class ParkwaySide:
    def __init__(self, args: dict[str, Any]) -> None:
        import parkway

        self.client = parkway.AsyncClient(args["address"], timeout=60)

    def hello(self) -> dict[str, Any]:
        return {"versions": versions(["parkway", "grpcio", "protobuf"]), "store": {}}

    async def park(self) -> tuple[Any, Any, float]:
        """A new session parked on one bench_noop call: (its stream, the call, µs send → REQUIRE)."""
        session = await self.client.create_session("bench")
        chat = await self.client.attach(session.id)
        t0 = now_us()
        await chat.send_message("park")
        call = None
        took = 0.0
        async for event in chat.until_settled():
            if event.kind == "require_user_confirm":
                took = now_us() - t0
                call = event.tool_calls[0]
            elif event.kind == "reply_end":
                raise RuntimeError(f"the reply ended instead of parking: {event!r}")
        if call is None:
            raise RuntimeError("the reply settled without REQUIRE_USER_CONFIRM")
        return chat, call, took

    async def resume(self, chat: Any, call: Any) -> float:
        t0 = now_us()
        await chat.confirm(call)
        async for event in chat.until_settled():
            if event.kind == "reply_end":
                took = now_us() - t0
                if event.finished_reason != 1:  # FINISHED_REASON_COMPLETED
                    raise RuntimeError(f"the resumed reply did not complete: {event!r}")
                return took
        raise RuntimeError("the resumed reply parked again")

    async def latency(self, n: int) -> dict[str, Any]:
        parks: list[float] = []
        resumes: list[float] = []
        for _ in range(n):
            chat, call, parked = await self.park()
            parks.append(parked)
            resumes.append(await self.resume(chat, call))
            await chat.close()
        return {"park": parks, "resume": resumes}

    async def throughput(
        self, sessions: int, workers: int, mode: str, server_pid: int | None = None
    ) -> dict[str, Any]:
        if mode != "async":
            raise ValueError("the Parkway side runs asyncio tasks")
        parked = [await self.park() for _ in range(sessions)]
        queue: asyncio.Queue[tuple[Any, Any, float]] = asyncio.Queue()
        for item in parked:
            queue.put_nowait(item)

        async def worker() -> None:
            while not queue.empty():
                chat, call, _ = queue.get_nowait()
                await self.resume(chat, call)

        s0 = threads_cpu_seconds(server_pid)
        c0, t0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(workers)))
        t1, c1 = time.perf_counter(), time.process_time()
        s1 = threads_cpu_seconds(server_pid)
        for chat, _, _ in parked:
            await chat.close()
        out = {"seconds": t1 - t0, "resumes": sessions, "cpu_seconds": c1 - c0}
        if s0 is not None and s1 is not None:
            out["server_cpu_seconds"] = s1 - s0
        return out

    async def close(self) -> None:
        await self.client.close()


async def main() -> None:
    args = json.loads(sys.argv[1])
    side: Any = LangGraphSide(args) if args["target"] == "langgraph" else ParkwaySide(args)
    loop = asyncio.get_running_loop()

    def answer(value: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(value) + "\n")
        sys.stdout.flush()

    answer({"ready": True, **side.hello()})
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        command = json.loads(line)
        op = command["op"]
        if op == "exit":
            break
        try:
            if op == "latency":
                answer(await side.latency(command["n"]))
            elif op == "throughput":
                answer(
                    await side.throughput(
                        command["sessions"],
                        command["workers"],
                        command.get("mode", "async"),
                        **{k: command[k] for k in ("server_pid",) if k in command},
                    )
                )
            else:
                raise ValueError(f"unknown op {op}")
        except Exception as err:  # reported to the suite, which fails the row
            answer({"error": f"{type(err).__name__}: {err}"})
    await side.close()


if __name__ == "__main__":
    asyncio.run(main())
