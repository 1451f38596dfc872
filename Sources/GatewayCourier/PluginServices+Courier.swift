public import GatewayPluginKit
import GatewayPluginPostgres

extension PluginServices {
    /// The codes of `table`'s channel where this gateway keeps its plugins' tables.
    public func codes<Table: CodeTable>(in table: Table.Type) -> any CodeStore<Table.Address> {
        switch storage {
        case .database(let database): PostgresCodeStore<Table>(client: database.postgres, logger: logger)
        case .memory(let memory): MemoryCodeStore<Table>(memory: memory)
        }
    }

    /// The outbox where this gateway keeps its plugins' tables.
    public var outbox: any OutboxStore {
        switch storage {
        case .database(let database): PostgresOutbox(client: database.postgres, logger: logger)
        case .memory(let memory): MemoryOutbox(memory: memory)
        }
    }
}
