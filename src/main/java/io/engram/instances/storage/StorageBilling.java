package io.engram.instances.storage;

import io.engram.organizations.Organization;
import io.engram.platform.Ids;
import io.engram.store.Database;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.OptionalLong;
import org.jdbi.v3.core.Handle;

/**
 * Storage bought beyond the plan, and what it costs. A purchase ({@code POST /storage/upgrade})
 * raises the organization's allowance at once; the ledger charges each UTC day the month's price
 * (the spec's: training data $0.50/GB, embeddings $0.30/GB, each LoRA adapter beyond the plan $5)
 * divided by the days of that month. Quantities are thousandths of a GB and money millionths of a
 * dollar, both exact integers: no floating point touches money. A day's charge is written as soon
 * as something is bought and brought up to the day's largest quantity by {@link #accrue} (hourly),
 * so a day is charged once, at the most that was in force that day.
 */
public final class StorageBilling {
  /** Price per GB (or adapter) per month, in dollars, as the spec gives them. */
  public static final BigDecimal TRAINING_DATA_PRICE = new BigDecimal("0.50");

  public static final BigDecimal EMBEDDINGS_PRICE = new BigDecimal("0.30");
  public static final BigDecimal ADAPTER_PRICE = new BigDecimal("5.00");

  /** A purchase may add at most this much of each kind at once. */
  public static final BigDecimal MAX_GB = new BigDecimal("100000");

  /** Storage bought so far, in GB. */
  public record Purchased(BigDecimal trainingDataGb, BigDecimal embeddingsGb) {
    public long bytes() {
      return trainingDataGb
          .add(embeddingsGb)
          .multiply(BigDecimal.valueOf(StorageUsage.GB))
          .longValueExact();
    }
  }

  /** One line of the ledger. */
  public record Charge(
      LocalDate day, String item, BigDecimal quantity, BigDecimal unitPrice, long amountMicros) {}

  private final Database db;
  private final StorageUsage usage;
  private final Clock clock;

  public StorageBilling(Database db, StorageUsage usage, Clock clock) {
    this.db = db;
    this.usage = usage;
    this.clock = clock;
  }

  /** Adds to the organization's allowance now, and charges today for it. */
  public Purchased upgrade(
      Organization org, BigDecimal trainingDataGb, BigDecimal embeddingsGb, String by) {
    long now = clock.millis();
    db.write(h -> h.createUpdate("""
            INSERT INTO storage_upgrades (id, org_id, training_data_mgb, embeddings_mgb,
              created_at, created_by)
            VALUES (:id, :org, :training, :embeddings, :now, :by)""")
        .bind("id", Ids.newId("stup", now))
        .bind("org", org.id())
        .bind("training", milli(trainingDataGb))
        .bind("embeddings", milli(embeddingsGb))
        .bind("now", now)
        .bind("by", by)
        .execute());
    accrue(org, today());
    return purchased(org.id());
  }

  public Purchased purchased(String orgId) {
    return db.read(h -> purchased(h, orgId));
  }

  static Purchased purchased(Handle h, String orgId) {
    long[] milli = h.createQuery("""
            SELECT COALESCE(SUM(training_data_mgb), 0), COALESCE(SUM(embeddings_mgb), 0)
            FROM storage_upgrades WHERE org_id = :org""")
        .bind("org", orgId)
        .map((rs, ctx) -> new long[] {rs.getLong(1), rs.getLong(2)})
        .one();
    return new Purchased(gb(milli[0]), gb(milli[1]));
  }

  /** Brings the day's charges of the organization up to what is in force now. */
  public void accrue(Organization org, LocalDate day) {
    Purchased bought = purchased(org.id());
    OptionalLong included = usage.limits(org).adapters();
    long adapters = usage.measure(org.id()).adapters();
    long beyond = included.isEmpty() ? 0 : Math.max(0, adapters - included.getAsLong());
    db.write(h -> {
      charge(h, org.id(), day, "training_data", bought.trainingDataGb(), TRAINING_DATA_PRICE);
      charge(h, org.id(), day, "embeddings", bought.embeddingsGb(), EMBEDDINGS_PRICE);
      charge(h, org.id(), day, "lora_adapters", BigDecimal.valueOf(beyond), ADAPTER_PRICE);
      return null;
    });
  }

  /** The organizations that have anything to be charged for: those that bought storage. */
  public List<String> billed() {
    return db.read(h -> h.createQuery("SELECT DISTINCT org_id FROM storage_upgrades")
        .mapTo(String.class)
        .list());
  }

  /** The ledger between two days (inclusive), oldest first. */
  public List<Charge> ledger(String orgId, LocalDate from, LocalDate to) {
    return db.read(h -> h.createQuery("""
            SELECT day, item, quantity, unit_price, amount_micros FROM storage_charges
            WHERE org_id = :org AND day >= :from AND day <= :to ORDER BY day, item""")
        .bind("org", orgId)
        .bind("from", from.toString())
        .bind("to", to.toString())
        .map((rs, ctx) -> new Charge(
            LocalDate.parse(rs.getString("day")),
            rs.getString("item"),
            new BigDecimal(rs.getString("quantity")),
            new BigDecimal(rs.getString("unit_price")),
            rs.getLong("amount_micros")))
        .list());
  }

  public LocalDate today() {
    return LocalDate.ofInstant(clock.instant(), ZoneOffset.UTC);
  }

  /** The day's price of {@code quantity} at a monthly {@code price}, in micro-dollars. */
  public static long dayAmountMicros(BigDecimal quantity, BigDecimal monthlyPrice, LocalDate day) {
    return quantity
        .multiply(monthlyPrice)
        .multiply(BigDecimal.valueOf(1_000_000))
        .divide(BigDecimal.valueOf(day.lengthOfMonth()), 0, RoundingMode.HALF_EVEN)
        .longValueExact();
  }

  private void charge(
      Handle h, String orgId, LocalDate day, String item, BigDecimal quantity, BigDecimal price) {
    if (quantity.signum() == 0) {
      return;
    }
    long amount = dayAmountMicros(quantity, price, day);
    // A day keeps the largest charge it saw: buying more raises it, nothing lowers it.
    h.createUpdate("""
            INSERT INTO storage_charges (org_id, day, item, quantity, unit_price, amount_micros,
              updated_at)
            VALUES (:org, :day, :item, :quantity, :price, :amount, :now)
            ON CONFLICT (org_id, day, item) DO UPDATE SET quantity = excluded.quantity,
              unit_price = excluded.unit_price, amount_micros = excluded.amount_micros,
              updated_at = excluded.updated_at
            WHERE excluded.amount_micros > storage_charges.amount_micros""")
        .bind("org", orgId)
        .bind("day", day.toString())
        .bind("item", item)
        .bind("quantity", quantity.toPlainString())
        .bind("price", price.toPlainString())
        .bind("amount", amount)
        .bind("now", clock.millis())
        .execute();
  }

  static long milli(BigDecimal gb) {
    return gb.movePointRight(3).setScale(0, RoundingMode.UNNECESSARY).longValueExact();
  }

  private static BigDecimal gb(long milli) {
    return StorageViews.plain(BigDecimal.valueOf(milli, 3));
  }
}
