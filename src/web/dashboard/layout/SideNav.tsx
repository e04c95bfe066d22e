import { NavLink } from 'react-router';
import { useCan } from '../../session/CurrentUser.tsx';
import { NAV_ITEMS } from './nav-items.ts';

/** The dashboard's sections the person may see; the current one is marked for screen readers (aria-current). */
export function SideNav() {
  const can = useCan();
  return (
    <nav className="side-nav" aria-label="Dashboard">
      <ul>
        {NAV_ITEMS.filter((item) => !item.permission || can(item.permission)).map((item) => (
          <li key={item.to}>
            <NavLink to={item.to}>{item.label}</NavLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}
