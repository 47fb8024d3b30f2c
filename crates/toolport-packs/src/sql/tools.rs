//! The SQL pack's tools (`query`, `list_tables`, `describe_table`), its
//! table resources (`sql://<name>/tables/<table>`: the columns and the first
//! rows) and its `query-with-explain` prompt.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolport_protocol::ErrorObject;
use toolport_protocol::content::{ResourceContents, Role};
use toolport_protocol::prompts::PromptMessage;
use toolport_protocol::resources::{Resource, ResourceTemplate};
use toolport_server::completion::Completer;
use toolport_server::{
    Json, NoArgs, RequestContext, ResourceEntry, ResourceError, ResourceRequest, ServerBuilder, TaskSupport,
    TemplateEntry, ToolError, prompt, tool,
};

use super::guard::Flavor;
use super::{Rows, Shared, SqlError, TableDescription, TableInfo};

/// Rows a table resource shows.
const SAMPLE_ROWS: usize = 20;

#[derive(Deserialize, JsonSchema)]
struct QueryArgs {
    /// Exactly one read-only statement: SELECT, WITH ... SELECT, VALUES, or EXPLAIN of a query.
    #[schemars(length(min = 1, max = 100000))]
    sql: String,
}

#[derive(Deserialize, JsonSchema)]
struct TableArgs {
    /// The table or view (`schema.table` for PostgreSQL schemas other than public).
    #[schemars(length(min = 1, max = 1000))]
    table: String,
}

/// The tables and views.
#[derive(Debug, Serialize, JsonSchema)]
struct Tables {
    /// "SQLite" or "PostgreSQL".
    database: String,
    tables: Vec<TableInfo>,
}

fn tool_error(e: SqlError) -> ToolError {
    ToolError::failed(e)
}

async fn query(shared: Arc<Shared>, args: QueryArgs) -> Result<Json<Rows>, ToolError> {
    let rows = shared
        .backend
        .query(&args.sql, shared.max_rows)
        .await
        .map_err(tool_error)?;
    Ok(Json(rows))
}

async fn list_tables(shared: Arc<Shared>) -> Result<Json<Tables>, ToolError> {
    let tables = shared.backend.list_tables().await.map_err(tool_error)?;
    Ok(Json(Tables {
        database: shared.backend.flavor().name().to_owned(),
        tables,
    }))
}

async fn describe_table(shared: Arc<Shared>, args: TableArgs) -> Result<Json<TableDescription>, ToolError> {
    Ok(Json(shared.backend.describe(&args.table).await.map_err(tool_error)?))
}

fn uri_prefix(shared: &Shared) -> String {
    format!("sql://{}/tables/", shared.name)
}

/// A table's columns and first rows, as JSON.
async fn read_table(shared: Arc<Shared>, uri: String, table: String) -> Result<ResourceContents, ResourceError> {
    let known = shared
        .backend
        .list_tables()
        .await
        .map_err(|e| ResourceError::Failed(e.to_string()))?;
    if !known.iter().any(|t| t.name == table) {
        return Err(ResourceError::NotFound(uri));
    }
    let description = shared
        .backend
        .describe(&table)
        .await
        .map_err(|e| ResourceError::Failed(e.to_string()))?;
    let sample = shared
        .backend
        .query(&shared.backend.select_all(&table), SAMPLE_ROWS)
        .await
        .map_err(|e| ResourceError::Failed(e.to_string()))?;
    let body = json!({ "table": description, "firstRows": sample });
    Ok(ResourceContents::text(uri, Some("application/json"), body.to_string()))
}

fn table_resource(shared: &Arc<Shared>, table: &TableInfo) -> ResourceEntry {
    let s = shared.clone();
    let name = table.name.clone();
    ResourceEntry::new(
        Resource {
            uri: format!("{}{}", uri_prefix(shared), table.name),
            name: table.name.clone(),
            title: Some(format!("{} {}", table.kind, table.name)),
            description: Some(format!(
                "Columns and the first {SAMPLE_ROWS} rows of the {} {}",
                table.kind, table.name
            )),
            mime_type: Some("application/json".into()),
            ..Default::default()
        },
        move |_cx, req: ResourceRequest| read_table(s.clone(), req.uri, name.clone()),
    )
}

#[derive(Deserialize, JsonSchema)]
struct ExplainArgs {
    /// The SQL query to check and run.
    query: String,
}

async fn query_with_explain(
    shared: Arc<Shared>,
    _cx: RequestContext,
    args: ExplainArgs,
) -> Result<Vec<PromptMessage>, ToolError> {
    if args.query.trim().is_empty() {
        return Err(ToolError::Protocol(ErrorObject::invalid_params(
            "query must not be empty",
        )));
    }
    let flavor = shared.backend.flavor();
    let explain = match flavor {
        Flavor::Sqlite => "EXPLAIN QUERY PLAN",
        Flavor::Postgres => "EXPLAIN",
    };
    let tables = shared
        .tables
        .iter()
        .map(|t| format!("{} ({})", t.name, t.kind))
        .collect::<Vec<_>>()
        .join(", ");
    let query = args.query.trim().trim_end_matches(';');
    let text = format!(
        "The {} database \"{}\" has these tables: {tables}.\n\n\
         Before running this query, check its plan: call the `query` tool with\n\n\
         ```sql\n{explain} {query}\n```\n\n\
         Read the plan and say whether it scans whole tables that an index could avoid, or joins without a usable condition. \
         If the plan is reasonable, run the query itself with the `query` tool and summarise the result \
         (the result says `truncated` when it has more rows than the cap). If not, suggest a better query first.\n\n\
         ```sql\n{query}\n```",
        flavor.name(),
        shared.name
    );
    Ok(vec![PromptMessage::text(Role::User, text)])
}

fn table_completer(shared: &Arc<Shared>) -> Completer {
    let names: Vec<String> = shared.tables.iter().map(|t| t.name.clone()).collect();
    toolport_server::completion::from_list(names)
}

/// Adds the tools, resources and prompt.
pub(crate) fn install(shared: &Arc<Shared>, mut builder: ServerBuilder) -> ServerBuilder {
    let flavor = shared.backend.flavor().name();
    let s = shared.clone();
    builder = builder.tool(
        tool("query")
            .title("Run a read-only SQL query")
            .description(format!(
                "Runs exactly one read-only SQL statement ({flavor}): SELECT, WITH ... SELECT, VALUES or EXPLAIN. Writes, several statements and side-effecting functions are refused. Returns columns and rows; at most {} rows (`truncated` says whether there were more).",
                shared.max_rows
            ))
            .read_only()
            // A long query can run as a task; being read-only, it can run again.
            .task_support(TaskSupport::Optional)
            .resumable()
            .handler(move |args: QueryArgs| query(s.clone(), args)),
    );
    let s = shared.clone();
    builder = builder.tool(
        tool("list_tables")
            .description(format!("Lists the tables and views of the {flavor} database."))
            .read_only()
            .handler(move |_: NoArgs| list_tables(s.clone())),
    );
    let s = shared.clone();
    builder = builder.tool(
        tool("describe_table")
            .description("The columns of a table or view: name, type, nullability, default, primary key.")
            .read_only()
            .handler(move |args: TableArgs| describe_table(s.clone(), args)),
    );
    for table in &shared.tables {
        builder = builder.resource(table_resource(shared, table));
    }
    let s = shared.clone();
    builder = builder.template(
        TemplateEntry::new(
            ResourceTemplate {
                uri_template: format!("{}{{table}}", uri_prefix(shared)),
                name: "table".into(),
                title: Some(format!("A table of the {flavor} database")),
                description: Some(format!("Columns and the first {SAMPLE_ROWS} rows of any table or view")),
                mime_type: Some("application/json".into()),
                ..Default::default()
            },
            move |_cx, req: ResourceRequest| {
                let table = req.variables.get("table").cloned().unwrap_or_default();
                read_table(s.clone(), req.uri, table)
            },
        )
        .complete("table", table_completer(shared)),
    );
    let s = shared.clone();
    builder.prompt(
        prompt("query-with-explain")
            .title("Check a query's plan, then run it")
            .description("Asks the model to EXPLAIN a query with the query tool, judge the plan, and then run it.")
            .handler(move |cx: RequestContext, args: ExplainArgs| query_with_explain(s.clone(), cx, args)),
    )
}
