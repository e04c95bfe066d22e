import { loadConfig } from './src/config.ts';
import { ormOptions } from './src/db/orm-config.ts';

/**
 * For the MikroORM CLI (`npx mikro-orm migration:create`, `schema:update --dump`). It needs a real
 * server: set DATABASE_URL. The application itself starts through src/main.ts.
 */
const config = loadConfig(process.env);
if (!config.DATABASE_URL) throw new Error('The MikroORM CLI needs DATABASE_URL (a running PostgreSQL).');
export default ormOptions(config.DATABASE_URL, 2);
