"""Paste shapes for bench/real_retention.py --paste mixed: each returns ~400-600 tokens (~1700-2400 chars) of one shape, varied by n."""

import json

TARGET = 2000  # characters, ~500 tokens


def _fill(make, n, target=TARGET):
    out, i = [], 0
    while len("\n".join(out)) < target:
        out.append(make(i))
        i += 1
    return out


def _records(n, k):
    names = ["Alice Moreau", "Bilal Haddad", "Chen Wei", "Dara Okafor", "Elif Yilmaz", "Femi Adeyemi",
             "Greta Lind", "Hiro Tanaka", "Ines Duarte", "Jonas Berg", "Kavya Iyer", "Luca Romano"]
    return [{"id": 1000 + n * 100 + i, "name": names[(i + n) % len(names)],
             "email": names[(i + n) % len(names)].split()[0].lower() + f"{i}@example.org",
             "plan": ["free", "team", "enterprise"][i % 3], "active": i % 4 != 0,
             "created_at": f"2025-0{1 + i % 9}-1{i % 10}T08:{i:02}:00Z", "seats": 3 + i * n % 17}
            for i in range(k)]


def pretty_json(n):
    return json.dumps({"request_id": f"req-{n}-9a8b", "page": n, "results": _records(n, 9)}, indent=2)


def minified_json(n):
    return json.dumps({"request_id": f"req-{n}-77cd", "page": n, "results": _records(n, 12)}, separators=(",", ":"))


def csv_table(n):
    head = ["id,name,email,plan,active,created_at,seats"]
    return "\n".join(head + [f"{r['id']},{r['name']},{r['email']},{r['plan']},{str(r['active']).lower()},{r['created_at']},{r['seats']}"
                             for r in _records(n, 22)])


def kubectl_pods(n):
    rows = ["NAME                                      READY   STATUS             RESTARTS       AGE"]
    svcs = ["api", "worker", "scheduler", "gateway", "billing", "search", "notifier", "auth"]
    status = ["Running", "Running", "CrashLoopBackOff", "Running", "Pending", "Running", "Completed", "Error"]
    for i in range(24):
        name = f"{svcs[i % 8]}-{n}{i:02}7d9f8b-{chr(97 + i % 26)}x{i}k"
        rows.append(f"{name:<42}{'1/1' if i % 3 else '0/1':<8}{status[(i + n) % 8]:<19}{(i * 3) % 7:<15}{i + 2}d")
    return "\n".join(rows)


def psql_table(n):
    rows = [" id  |     customer     |   region   | orders |  revenue  | last_order",
            "-----+------------------+------------+--------+-----------+------------"]
    for i, r in enumerate(_records(n, 22)):
        rows.append(f" {r['id'] % 1000:>3} | {r['name']:<16} | {['us-east-1', 'ap-south-1', 'sa-east-1'][i % 3]:<10} | {i * 7 % 90:>6} | {i * 1234.5 % 9999:>9.2f} | 2025-0{1 + i % 9}-1{i % 10}")
    rows.append("(22 rows)")
    return "\n".join(rows)


def java_trace(n):
    out = [f"2026-11-24 10:15:{n:02}.123 ERROR 4242 --- [nio-8080-exec-{n}] o.a.c.c.C.[.[.[/].[dispatcherServlet] : Servlet.service() threw exception",
           f"java.lang.NullPointerException: Cannot invoke \"com.acme.order.Customer.getTier()\" because \"customer\" is null"]
    frames = ["com.acme.order.PricingService.computeDiscount(PricingService.java:{})",
              "com.acme.order.OrderService.place(OrderService.java:{})",
              "com.acme.order.web.OrderController.create(OrderController.java:{})",
              "java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:{})",
              "java.base/java.lang.reflect.Method.invoke(Method.java:{})",
              "org.springframework.web.method.support.InvocableHandlerMethod.doInvoke(InvocableHandlerMethod.java:{})",
              "org.springframework.web.servlet.FrameworkServlet.processRequest(FrameworkServlet.java:{})"]
    for i in range(16):
        out.append("\tat " + frames[i % len(frames)].format(40 + i * 11 + n))
    out.append(f"Caused by: java.lang.IllegalStateException: tier cache not warmed (shard {n})")
    for i in range(5):
        out.append("\tat " + frames[(i + 3) % len(frames)].format(90 + i * 7))
    out.append("\t... 48 common frames omitted")
    return "\n".join(out)


def go_panic(n):
    out = [f"panic: runtime error: index out of range [{n + 5}] with length {n + 5}", "",
           f"goroutine {17 + n} [running]:"]
    fns = ["main.(*Router).dispatch", "main.handleOrder", "net/http.HandlerFunc.ServeHTTP",
           "net/http.(*ServeMux).ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"]
    for i, f in enumerate(fns):
        out.append(f"{f}(0xc000{i}1a2b0, 0x{n}8, 0x10)")
        out.append(f"\t/home/dev/src/orders/{f.split('.')[-1].lower()}.go:{30 + i * 13 + n} +0x{i}4f")
    for g in range(7):
        out += ["", f"goroutine {g + 1} [chan receive, {g + 2} minutes]:",
                f"main.worker(0xc0000{g}e000)", f"\t/home/dev/src/orders/worker.go:{55 + g} +0x8c",
                f"created by main.startWorkers in goroutine 1", f"\t/home/dev/src/orders/main.go:{21 + g} +0x3a"]
    out.append("exit status 2")
    return "\n".join(out)


def rust_panic(n):
    out = [f"thread 'main' panicked at src/ledger/reconcile.rs:{100 + n}:17:",
           f"called `Option::unwrap()` on a `None` value", "stack backtrace:"]
    fns = ["std::panicking::begin_panic_handler", "std::panicking::rust_panic_with_hook", "core::panicking::panic_fmt", "core::panicking::panic",
           "core::option::unwrap_failed", "ledger::reconcile::match_entries", "ledger::reconcile::run",
           "ledger::main", "core::ops::function::FnOnce::call_once", "std::rt::lang_start::{{closure}}",
           "std::rt::lang_start_internal"]
    for i, f in enumerate(fns):
        out.append(f"  {i:>2}: {f}")
        out.append(f"             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/{f.split('::')[0]}/src/lib.rs:{50 + i * 7 + n}:5")
    out.append("note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.")
    return "\n".join(out)


def npm_err(n):
    out = [f"npm ERR! code ERESOLVE", "npm ERR! ERESOLVE unable to resolve dependency tree", "npm ERR!",
           f"npm ERR! While resolving: web-dashboard@{n}.4.0", "npm ERR! Found: react@18.2.0",
           "npm ERR! node_modules/react", "npm ERR!   react@\"^18.2.0\" from the root project", "npm ERR!",
           "npm ERR! Could not resolve dependency:"]
    for i in range(14):
        out.append(f"npm ERR! peer react@\"^17.0.{i}\" from legacy-chart-{i}@{n}.{i}.3")
        out.append(f"npm ERR! node_modules/legacy-chart-{i}")
    out += ["npm ERR!", "npm ERR! Fix the upstream dependency conflict, or retry",
            "npm ERR! this command with --force or --legacy-peer-deps",
            "npm ERR! to accept an incorrect (and potentially broken) dependency resolution.", "npm ERR!",
            f"npm ERR! A complete log of this run can be found in: /home/dev/.npm/_logs/2026-11-24T10_1{n}_02_123Z-debug-0.log"]
    return "\n".join(out)


def yaml_config(n):
    out = ["apiVersion: apps/v1", "kind: Deployment", "metadata:", f"  name: orders-api-{n}",
           "  labels:", "    app: orders-api", "    tier: backend", "spec:", "  replicas: 3", "  selector:",
           "    matchLabels:", "      app: orders-api", "  template:", "    metadata:", "      labels:",
           "        app: orders-api", "    spec:", "      containers:", "        - name: api",
           f"          image: registry.internal/orders-api:1.{n}.7", "          ports:",
           "            - containerPort: 8080", "          env:"]
    for i in range(16):
        out += [f"            - name: FEATURE_{i}_ENABLED", f"              value: \"{'true' if i % 2 else 'false'}\""]
    out += ["          resources:", "            limits:", "              cpu: 500m", "              memory: 512Mi",
            "          readinessProbe:", "            httpGet:", "              path: /healthz", "              port: 8080"]
    return "\n".join(out)


def html_snippet(n):
    out = ["<!DOCTYPE html>", "<html lang=\"en\">", "<head>", "  <meta charset=\"utf-8\">",
           f"  <title>Order dashboard {n}</title>", "  <link rel=\"stylesheet\" href=\"/static/app.css\">", "</head>",
           "<body>", "  <div id=\"app\" class=\"container\">", "    <table class=\"orders\">"]
    for i in range(16):
        out += ["      <tr>", f"        <td class=\"id\">{1000 + i}</td><td>Customer {i}</td>",
                f"        <td class=\"amount\">{i * 12.5:.2f}</td>", "      </tr>"]
    out += ["    </table>", "  </div>", "  <script src=\"/static/app.js\"></script>", "</body>", "</html>"]
    return "\n".join(out)


def python_source(n):
    return "\n".join([
        "import json", "import logging", "from dataclasses import dataclass", "", "log = logging.getLogger(__name__)", "", "",
        "@dataclass", "class Order:", "    id: int", "    customer: str", "    amount: float", "", "",
        f"def load_orders(path: str, limit: int = {100 + n}) -> list[Order]:",
        "    \"\"\"Read orders from a JSON lines file, skipping malformed rows.\"\"\"",
        "    orders = []", "    with open(path) as f:", "        for i, line in enumerate(f):", "            if i >= limit:",
        "                break", "            try:", "                row = json.loads(line)",
        "                orders.append(Order(row[\"id\"], row[\"customer\"], float(row[\"amount\"])))",
        "            except (KeyError, ValueError) as e:", "                log.warning(\"bad row %d: %s\", i, e)",
        "    return orders", "", "",
        "def total_by_customer(orders: list[Order]) -> dict[str, float]:", "    totals: dict[str, float] = {}",
        "    for o in orders:", "        totals[o.customer] = totals.get(o.customer, 0.0) + o.amount", "    return totals", "", "",
        "def top_customers(totals: dict[str, float], k: int = 5) -> list[tuple[str, float]]:",
        "    \"\"\"The k customers with the largest totals, largest first.\"\"\"",
        "    ranked = sorted(totals.items(), key=lambda kv: kv[1], reverse=True)",
        "    return ranked[:k]", "", "",
        "def write_report(path: str, totals: dict[str, float]) -> None:",
        "    with open(path, \"w\") as f:",
        "        json.dump({\"totals\": totals, \"top\": top_customers(totals)}, f, indent=2)",
        "    log.info(\"wrote %s (%d customers)\", path, len(totals))", "", "",
        "def main() -> None:", f"    orders = load_orders(\"/srv/data/orders-{n}.jsonl\")",
        "    for customer, total in sorted(total_by_customer(orders).items()):",
        "        print(f\"{customer:<20} {total:>10.2f}\")", "", "",
        "if __name__ == \"__main__\":", "    main()"])


def markdown_doc(n):
    return "\n".join([
        f"# Orders service runbook (rev {n})", "",
        "This runbook describes how the orders service is deployed, monitored and rolled back.",
        "It is meant for the engineer on call and assumes access to the production cluster.", "",
        "## Deploying", "",
        "1. Merge the release branch into `main` after the checks pass.",
        "2. Tag the commit with the next version and push the tag.",
        "3. Watch the pipeline until the canary reports healthy for ten minutes.", "",
        "## Monitoring", "",
        "- The latency dashboard shows p50, p95 and p99 for every endpoint.",
        "- Alerts page the on-call engineer when p99 stays above 800 ms for five minutes.",
        "- Error rates above two percent open an incident automatically.", "",
        "## Rolling back", "",
        "If the canary degrades, roll back with the previous tag and open a ticket describing what went wrong.",
        "Never roll back the database migrations by hand; ask the data team first.", "",
        "| Step | Owner | Time |", "|------|-------|------|", "| Canary | CI | 10 min |", "| Full rollout | CI | 30 min |", "",
        "## Contacts", "",
        "The platform team owns the cluster and the pipeline. The orders team owns the service code.",
        "Questions about billing go to the finance engineering channel.", "",
        "## Known issues", "",
        "- The nightly export sometimes takes longer than the backup window; rerun it by hand if it fails.",
        "- Cold caches after a deploy make the first minutes slower than usual, which is expected.",
        "- The staging environment shares a database with the demo environment, so be careful with test data.", "",
        "## Useful commands", "",
        "```", "make deploy ENV=staging", "make rollback ENV=production TAG=previous", "kubectl -n orders get pods", "```"])


def email(n):
    return "\n".join([
        "Hi all,", "",
        f"Following up on Tuesday's call about the migration (thread {n}), here is where things stand.",
        "The new storage layer is running in the test environment and the first round of load tests went well,",
        "although we saw some latency spikes when the cache was cold. We think those are caused by the connection",
        "pool being too small during warm-up, and we are going to try a larger pool before the next run.", "",
        "On the customer side, the two pilot accounts have agreed to move next week. They asked for a short",
        "maintenance window on a weekday evening, and for a written summary of what changes for their users.",
        "I have drafted that summary and will share it once legal has had a look at the wording.", "",
        "There are still a few open questions. We have not decided whether the old reporting jobs should be",
        "rewritten or simply pointed at the new tables, and the answer depends on how much the schemas diverge.",
        "It would help if someone from the analytics team could look at the mapping document before Friday.", "",
        "Finally, please keep in mind that the holiday freeze starts earlier this year, so anything we want in",
        "production before the end of the year has to be merged and tested well before then. If you think your",
        "part is at risk, tell me now rather than later so that we can move people around.", "",
        "One more thing about the budget: finance wants the numbers for the extra test hardware by the end of",
        "the month, together with a short justification. I can write the justification if someone gives me the",
        "figures, and I would rather we ask for slightly more than we need than come back for a second round.", "",
        "Thanks for all the work so far, it has been a good few weeks.", "", "Best,", "Morgan"])


SHAPES = {
    "pretty_json": pretty_json, "minified_json": minified_json, "csv": csv_table, "kubectl": kubectl_pods,
    "psql": psql_table, "java_trace": java_trace, "go_panic": go_panic, "rust_panic": rust_panic,
    "npm_err": npm_err, "yaml": yaml_config, "html": html_snippet, "python_src": python_source,
    "markdown": markdown_doc, "email": email,
}
