//! The demo server `toolport serve` offers: one of each kind of thing MCP
//! can do, small enough to read in one sitting.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolport_protocol::content::{ResourceContents, Role};
use toolport_protocol::elicitation::{ElicitAction, ElicitRequestParams};
use toolport_protocol::logging::LoggingLevel;
use toolport_protocol::prompts::PromptMessage;
use toolport_protocol::resources::{Resource, ResourceTemplate};
use toolport_server::completion::from_list;
use toolport_server::{
    Json, RequestContext, ResourceEntry, ResourceError, Server, ServerBuilder, TaskSupport, TemplateEntry, ToolError,
    prompt, tool,
};

/// Cities the weather tools and the trip prompt know, for completion.
const CITIES: &[&str] = &[
    "Amsterdam",
    "Berlin",
    "Lisbon",
    "London",
    "Madrid",
    "Paris",
    "Rome",
    "Tokyo",
    "Vienna",
];

/// How the long task's runs ended, readable as `demo://jobs`.
#[derive(Debug, Default)]
pub struct JobStats {
    started: AtomicU64,
    completed: AtomicU64,
    cancelled: AtomicU64,
}

impl JobStats {
    fn snapshot(&self) -> Value {
        json!({
            "started": self.started.load(Ordering::SeqCst),
            "completed": self.completed.load(Ordering::SeqCst),
            "cancelled": self.cancelled.load(Ordering::SeqCst),
        })
    }
}

/// Counts a run as cancelled unless it was marked completed: dropping the
/// handler's future is how cancellation stops it, so the drop is the signal.
struct JobGuard {
    stats: Arc<JobStats>,
    completed: bool,
}

impl Drop for JobGuard {
    fn drop(&mut self) {
        let counter = if self.completed {
            &self.stats.completed
        } else {
            &self.stats.cancelled
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Units {
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// City name, for example "Paris".
    #[schemars(length(min = 1, max = 100))]
    city: String,
    /// Temperature units; celsius when absent.
    units: Option<Units>,
}

#[derive(Deserialize, JsonSchema)]
struct StatsArgs {
    /// The numbers to summarise (at least one).
    #[schemars(length(min = 1, max = 10000))]
    numbers: Vec<f64>,
}

#[derive(Serialize, JsonSchema)]
struct Stats {
    count: usize,
    sum: f64,
    mean: f64,
    min: f64,
    max: f64,
}

#[derive(Deserialize, JsonSchema)]
struct LongTaskArgs {
    /// How many steps to run (progress is reported after each).
    #[schemars(range(min = 1, max = 1000))]
    steps: u32,
    /// Milliseconds per step.
    #[schemars(range(max = 60000))]
    step_ms: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
struct BookingArgs {
    /// Where to book.
    restaurant: String,
}

#[derive(Deserialize, JsonSchema)]
struct TripArgs {
    /// The destination city.
    city: String,
    /// How many days (a number, as text).
    days: Option<String>,
}

/// A deterministic "temperature" for a city, so answers are stable in tests.
fn temperature_of(city: &str) -> f64 {
    let seed = city
        .to_lowercase()
        .bytes()
        .fold(17u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
    f64::from(seed % 300) / 10.0
}

fn conditions_of(city: &str) -> &'static str {
    ["sunny", "cloudy", "light rain", "windy", "clear"][city.len() % 5]
}

async fn echo(args: EchoArgs) -> String {
    args.message
}

async fn weather(args: WeatherArgs) -> String {
    let celsius = temperature_of(&args.city);
    let (value, unit) = match args.units {
        Some(Units::Fahrenheit) => (celsius * 9.0 / 5.0 + 32.0, "°F"),
        _ => (celsius, "°C"),
    };
    format!("{}: {value:.1}{unit}, {}", args.city, conditions_of(&args.city))
}

async fn stats(args: StatsArgs) -> Result<Json<Stats>, ToolError> {
    if args.numbers.iter().any(|n| !n.is_finite()) {
        return Err(ToolError::failed("every number must be finite"));
    }
    let count = args.numbers.len();
    let sum: f64 = args.numbers.iter().sum();
    if !sum.is_finite() {
        // JSON has no infinity: the result would break the outputSchema.
        return Err(ToolError::failed(
            "the sum of these numbers is beyond the largest 64-bit float; scale them down first",
        ));
    }
    let min = args.numbers.iter().copied().fold(f64::INFINITY, f64::min);
    let max = args.numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Ok(Json(Stats {
        count,
        sum,
        mean: sum / count as f64,
        min,
        max,
    }))
}

async fn long_task(cx: RequestContext, args: LongTaskArgs, stats: Arc<JobStats>) -> String {
    stats.started.fetch_add(1, Ordering::SeqCst);
    let mut job = JobGuard {
        stats,
        completed: false,
    };
    let step = Duration::from_millis(args.step_ms.unwrap_or(100));
    cx.log(
        LoggingLevel::Info,
        Some("long_task"),
        json!(format!("starting {} steps", args.steps)),
    )
    .await;
    for done in 1..=args.steps {
        tokio::time::sleep(step).await;
        let message = format!("step {done} of {}", args.steps);
        cx.progress(f64::from(done), Some(f64::from(args.steps)), Some(message))
            .await;
    }
    job.completed = true;
    format!("finished {} steps", args.steps)
}

async fn book_table(cx: RequestContext, args: BookingArgs) -> Result<String, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name for the booking"},
            "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 20}
        },
        "required": ["name", "guests"]
    });
    let Value::Object(schema) = form else {
        unreachable!("literal object")
    };
    let message = format!("Book a table at {}?", args.restaurant);
    let answer = cx.elicit("booking", ElicitRequestParams::form(message, schema)).await?;
    match (answer.action, answer.content) {
        (ElicitAction::Accept, Some(content)) => {
            let name = content.get("name").and_then(Value::as_str).unwrap_or("guest");
            let guests = content.get("guests").and_then(Value::as_i64).unwrap_or(1);
            Ok(format!(
                "Booked a table for {guests} at {} under the name {name}.",
                args.restaurant
            ))
        }
        (ElicitAction::Accept, None) => Err(ToolError::failed("the booking form came back empty")),
        (ElicitAction::Decline, _) => Ok("The user declined; nothing was booked.".into()),
        (ElicitAction::Cancel, _) => Ok("The user dismissed the form; nothing was booked.".into()),
    }
}

async fn trip_prompt(_cx: RequestContext, args: TripArgs) -> Result<Vec<PromptMessage>, ToolError> {
    let days: u32 = match args.days.as_deref() {
        None => 3,
        Some(d) => d
            .trim()
            .parse()
            .map_err(|_| ToolError::failed(format!("days must be a whole number, not {d:?}")))?,
    };
    Ok(vec![
        PromptMessage::text(
            Role::User,
            format!("Plan a {days}-day trip to {}. Check the weather first.", args.city),
        ),
        PromptMessage::text(
            Role::Assistant,
            format!("I will look up the weather in {} and then plan each day.", args.city),
        ),
    ])
}

/// Adds the demo tools, resources, templates and prompt to a server builder.
pub fn install(builder: ServerBuilder) -> ServerBuilder {
    let jobs = Arc::new(JobStats::default());
    let jobs_for_tool = jobs.clone();
    let jobs_for_resource = jobs.clone();
    builder
        .instructions("A demo server: echo, weather, statistics, a long task with progress, a booking that asks the user, a readme resource, a forecast template and a trip-planning prompt.")
        .tool(tool("echo").description("Returns the message unchanged.").read_only().handler(echo))
        .tool(
            tool("get_weather")
                .title("Current weather")
                .description("Current temperature and conditions for a city (demo data).")
                .read_only()
                .handler(weather),
        )
        .tool(
            tool("compute_stats")
                .description("Count, sum, mean, min and max of a list of numbers, as structured output.")
                .read_only()
                .handler(stats),
        )
        .tool(
            tool("long_task")
                .description("Runs for steps × step_ms milliseconds, reporting progress after each step; stops when cancelled. Runs as a task when the client allows (and again after a restart).")
                .task_support(TaskSupport::Optional)
                .resumable()
                .handler(move |cx: RequestContext, args: LongTaskArgs| long_task(cx, args, jobs_for_tool.clone())),
        )
        .tool(
            tool("book_table")
                .description("Books a restaurant table after asking the user for a name and the number of guests; as a task, the question waits in the task.")
                .task_support(TaskSupport::Optional)
                .handler(book_table),
        )
        .resource(ResourceEntry::new(
            Resource {
                uri: "demo://readme".into(),
                name: "readme".into(),
                title: Some("About this server".into()),
                mime_type: Some("text/markdown".into()),
                ..Default::default()
            },
            |_cx, req| async move {
                ResourceContents::text(req.uri, Some("text/markdown"), "# Toolport demo\n\nTry `get_weather` with a city, or `long_task` with `steps: 5`.\n")
            },
        ))
        .resource(ResourceEntry::new(
            Resource {
                uri: "demo://jobs".into(),
                name: "jobs".into(),
                title: Some("Runs of long_task".into()),
                description: Some("How many long_task runs started, completed and were cancelled.".into()),
                mime_type: Some("application/json".into()),
                ..Default::default()
            },
            move |_cx, req| {
                let snapshot = jobs_for_resource.snapshot();
                async move { ResourceContents::text(req.uri, Some("application/json"), snapshot.to_string()) }
            },
        ))
        .template(
            TemplateEntry::new(
                ResourceTemplate {
                    uri_template: "weather://{city}/forecast".into(),
                    name: "forecast".into(),
                    title: Some("Three-day forecast".into()),
                    mime_type: Some("text/plain".into()),
                    ..Default::default()
                },
                |_cx, req| async move {
                    let city = req.variables.get("city").cloned().unwrap_or_default();
                    if city.trim().is_empty() {
                        return Err(ResourceError::NotFound(req.uri));
                    }
                    let base = temperature_of(&city);
                    let days: Vec<String> =
                        (1..=3).map(|d| format!("day {d}: {:.1}°C, {}", base + f64::from(d), conditions_of(&city))).collect();
                    Ok(ResourceContents::text(req.uri, Some("text/plain"), format!("{city}\n{}", days.join("\n"))))
                },
            )
            .complete("city", from_list(CITIES.iter().copied())),
        )
        .prompt(
            prompt("plan_trip")
                .title("Plan a trip")
                .description("Plans a trip to a city, checking the weather first.")
                .handler(trip_prompt)
                .complete("city", from_list(CITIES.iter().copied())),
        )
}

/// The demo server.
pub fn server() -> Server {
    install(Server::builder("toolport-demo", env!("CARGO_PKG_VERSION")).title("Toolport demo"))
        .build()
        .expect("the demo definitions are valid")
}
