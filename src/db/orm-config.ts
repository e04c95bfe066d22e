import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities.ts';
import { migrationsList } from './migrations/index.ts';

/** The ORM options shared by the server, the CLI and tests; only the connection differs. */
export function ormOptions(clientUrl: string, poolMax: number): Options {
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    discovery: { warnWhenNoEntities: true },
    pool: { min: 0, max: poolMax },
    debug: false,
    allowGlobalContext: false,
    forceUtcTimezone: true,
    migrations: {
      tableName: 'mikro_orm_migrations',
      path: './src/db/migrations',
      pathTs: './src/db/migrations',
      migrationsList,
      transactional: true,
      silent: true,
      snapshot: false,
      emit: 'ts',
    },
  });
}
