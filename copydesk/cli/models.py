"""`copydesk models`: what copydesk will send each configured model, and why
(summarise/capabilities.py: the shipped table and config.toml prices; offline)."""

from __future__ import annotations

import typer

from copydesk.cli import context as cx


def models(
    cli: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="print the plans as JSON"),
) -> None:
    """Show, for the writer ([summarise] model) and the checker ([checks] model), the
    temperature sent or why not, the tool choice, whether the API enforces the
    schema, the cache minimum, the prices and the model's lifecycle. Offline."""
    from summarise.capabilities import request_plan

    settings = cx.load(cli)
    plans = [
        request_plan(
            settings.summarise.model,
            settings.summarise.temperature,
            "summarise",
            config_prices=settings.summarise.prices,
        ),
        request_plan(
            settings.checks.model,
            settings.checks.temperature,
            "checks",
            config_prices=settings.checks.prices or settings.summarise.prices,
        ),
    ]
    if as_json:
        cx.emit_json(plans)
        return
    for plan in plans:
        cx.out.print(f"[{plan['section']}] {plan['model']}", markup=False)
        price = plan["price"]
        priced = (
            f"input {price['input']}, output {price['output']}, cache write "
            f"{price['cache_write']}, cache read {price['cache_read']} USD per million tokens"
            if price
            else "unknown (cost shown as unknown, never 0)"
        )
        for label, value in (
            ("temperature", plan["temperature"]),
            ("tool choice", plan["tool_choice"]),
            ("schema", plan["schema"]),
            ("cache", plan["cache"]),
            ("max output", plan["max_output_tokens"] or "unknown"),
            ("price", priced),
            ("lifecycle", plan["lifecycle"]),
        ):
            cx.out.print(f"  {label:<12} {value}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("models")(models)
