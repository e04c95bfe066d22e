import { Link } from 'react-router';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';

export function DashboardNotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        There is no such screen. <Link to="/dashboard">Back to the dashboard</Link>
      </p>
    </>
  );
}
